import VelvetFace

/// The retouch stages' metrics (docs/QUALITY.md, issue 18), on the CPU from downloaded
/// images, regions from the input's mesh. nil: the region is empty (cannot be computed).
extension QualityMetrics {
    /// What teeth whitening did to one face's teeth.
    public struct TeethFigures: Sendable {
        /// Mean CIELAB L* and b* change over the teeth pixels (lighter: > 0, less yellow: < 0).
        public let lightness: Double
        public let yellowness: Double
        public let teethPixels: Int
        /// The sclera's lightness (98th percentile of L* inside the open eyes), nil with no open eye.
        public let sclera: Double?
        /// Share of the teeth pixels darker than the sclera in the input (the ones there is room to lift).
        public let belowSclera: Double
        /// The most any pixel of the opening was lifted past max(its own L*, the sclera's).
        public let pastSclera: Double
    }

    /// Teeth whitening on one face. The teeth, as this metric tells them: pixels inside the
    /// mouth opening (the inner lip loop) by at least the feather whose input L* is at or
    /// above the opening's median and whose a* is below their b* (yellow-white, not the
    /// pink of tongue, gums and lips). nil when the mouth shows no such pixel.
    public static func teethWhitening(input: RGBImage, output: RGBImage, face: BeautyFace) -> TeethFigures? {
        let feather = max(0.5, TeethGeometry.featherShare * face.interOcularDistance)
        let inner = face.polygon(.lipsInner)
        let crop = cropRegion(around: inner, margin: 1, width: input.width, height: input.height)
        let opening = RegionMask.map(crop) { RegionMask.signedDistance($0, inner) <= -feather }
        let before = input.cropped(to: crop).pixels.map(lab), after = output.cropped(to: crop).pixels.map(lab)
        let lightnesses = zip(before, opening).filter(\.1).map { Float($0.0.x) }
        guard !lightnesses.isEmpty else { return nil }
        let median = Double(percentile(lightnesses, 0.5))
        let sclera = scleraLightness(input, face: face)
        var total = SIMD3<Double>.zero, count = 0, below = 0, past = 0.0
        for i in 0..<opening.count where opening[i] {
            past = max(past, after[i].x - max(before[i].x, sclera ?? 100))
            guard before[i].x >= median, before[i].y < before[i].z else { continue }
            total += after[i] - before[i]
            count += 1
            if before[i].x < sclera ?? 100 { below += 1 }
        }
        guard count > 0 else { return nil }
        return TeethFigures(lightness: total.x / Double(count), yellowness: total.z / Double(count), teethPixels: count,
                            sclera: sclera, belowSclera: Double(below) / Double(count), pastSclera: past)
    }

    /// Largest change of any channel at the pixels farther than the whitening's feather
    /// outside every face's mouth opening (0: bit-exact there); nil when no pixel is that far.
    public static func changeOutsideMouths(input: RGBImage, output: RGBImage, faces: [BeautyFace]) -> Float? {
        let mouths = faces.map { face in
            (loop: face.polygon(.lipsInner), feather: max(0.5, TeethGeometry.featherShare * face.interOcularDistance))
        }
        let boxes = mouths.map { cropRegion(around: $0.loop, margin: $0.feather + 1, width: input.width, height: input.height) }
        var worst: Float = 0, counted = 0
        for y in 0..<input.height {
            for x in 0..<input.width {
                let p = SIMD2(Float(x) + 0.5, Float(y) + 0.5)
                let near = zip(mouths, boxes).contains { mouth, box in
                    box.contains(x: x, y: y) && RegionMask.signedDistance(p, mouth.loop) < mouth.feather
                }
                if near { continue }
                counted += 1
                let i = y * input.width + x
                let difference = input.pixels[i] - output.pixels[i]
                worst = max(worst, difference.max(), -difference.min())
            }
        }
        return counted == 0 ? nil : worst
    }

    /// The 98th percentile of L* inside the face's open eyes (the lit white of the eye: the
    /// iris, pupil and lash shadow are the dark rest) (`TeethGeometry.openEyeRatio`),
    /// nil when no eye is open.
    public static func scleraLightness(_ image: RGBImage, face: BeautyFace) -> Double? {
        let eyes = TeethGeometry.openEyes(of: face)
        guard !eyes.isEmpty else { return nil }
        let crop = cropRegion(around: eyes.flatMap { $0 }, margin: 1, width: image.width, height: image.height)
        let inside = RegionMask.polygons(eyes, grownBy: 0, in: crop)
        let values = zip(image.cropped(to: crop).pixels, inside).filter(\.1).map { Float(lab($0.0).x) }
        return values.isEmpty ? nil : Double(percentile(values, 0.98))
    }

    static func lab(_ pixel: SIMD3<Float>) -> SIMD3<Double> {
        ColourDifference.lab(fromSRGB: SIMD3(Double(pixel.x), Double(pixel.y), Double(pixel.z)))
    }
}
