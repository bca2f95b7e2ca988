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

    /// What eye brightening did to one face's open eyes.
    public struct EyeFigures: Sendable {
        /// Mean CIELAB L* and a* change over the sclera pixels (lighter: > 0, less red: < 0).
        public let scleraLightness: Double
        public let scleraRedness: Double
        public let scleraPixels: Int
        /// The iris's fine contrast out / in: RMS of L* minus its 5x5 mean over the darker half
        /// of the opening past the lid band (iris and pupil).
        public let irisContrast: Double
        /// Mean SSIM of Y' in the eyelid band (within `lidBandShare` IOD of the contour, both sides).
        public let lidSSIM: Double
    }

    /// Half-width of the eyelid band, a fraction of the IOD.
    public static let lidBandShare: Float = 0.02

    /// Eye brightening on one face. The sclera, as this metric tells it: pixels inside an
    /// open eye's contour, past the eyelid band, whose input L* is at or above that eye's
    /// 75th percentile. nil with no open eye.
    public static func eyeBrightening(input: RGBImage, output: RGBImage, face: BeautyFace) -> EyeFigures? {
        let eyes = TeethGeometry.openEyes(of: face)
        guard !eyes.isEmpty else { return nil }
        let iod = face.interOcularDistance
        let band = lidBandShare * iod
        var total = SIMD3<Double>.zero, count = 0
        var ssimTotal = 0.0, ssimCount = 0
        var irisEnergy = (before: 0.0, after: 0.0)
        for eye in eyes {
            let crop = cropRegion(around: eye, margin: band + 8, width: input.width, height: input.height)
            var signed = [Float](repeating: 0, count: crop.width * crop.height)
            for row in 0..<crop.height {
                for column in 0..<crop.width {
                    let p = SIMD2(Float(crop.x + column) + 0.5, Float(crop.y + row) + 0.5)
                    signed[row * crop.width + column] = RegionMask.signedDistance(p, eye)
                }
            }
            let before = input.cropped(to: crop), after = output.cropped(to: crop)
            let beforeLab = before.pixels.map(lab), afterLab = after.pixels.map(lab)
            let opening = signed.indices.filter { signed[$0] < 0 }.map { Float(beforeLab[$0].x) }
            guard !opening.isEmpty else { continue }
            let bright = Double(percentile(opening, 0.75)), median = Double(percentile(opening, 0.5))
            let detailBefore = fineDetail(beforeLab.map(\.x), width: crop.width), detailAfter = fineDetail(afterLab.map(\.x), width: crop.width)
            for i in signed.indices where signed[i] < -band && beforeLab[i].x <= median {
                irisEnergy.before += detailBefore[i] * detailBefore[i]
                irisEnergy.after += detailAfter[i] * detailAfter[i]
            }
            for i in signed.indices where signed[i] < -band && beforeLab[i].x >= bright {
                total += afterLab[i] - beforeLab[i]
                count += 1
            }
            let map = ssimMap(before.luma, after.luma)
            for i in signed.indices where abs(signed[i]) <= band {
                ssimTotal += Double(map.values[i])
                ssimCount += 1
            }
        }
        guard count > 0, ssimCount > 0, irisEnergy.before > 0 else { return nil }
        return EyeFigures(scleraLightness: total.x / Double(count), scleraRedness: total.y / Double(count), scleraPixels: count,
                          irisContrast: (irisEnergy.after / irisEnergy.before).squareRoot(), lidSSIM: ssimTotal / Double(ssimCount))
    }

    /// What the under-eye retouch did below one open eye.
    public struct UnderEyeFigures: Sendable {
        /// Mean CIELAB L* of the cheek reference band minus that of the trough core (> 0:
        /// a dark circle), in the input and in the output.
        public let gapBefore: Double
        public let gapAfter: Double
        /// M6-style fine-band energy ratio out/in over the trough core: band Y' - G_f(Y'),
        /// sigma_f = max(0.5, 0.01 IOD) px.
        public let fineBand: Double
        public let troughPixels: Int
        public let cheekPixels: Int
    }

    /// The under-eye retouch below each of the face's open eyes (one entry per eye, each lit
    /// its own way), its regions from the input's mesh (`UnderEyeGeometry`): the trough core
    /// (full coverage: inside the under-eye loop by the feather and past the lid margin's
    /// guard) against the cheek band just below it; an eye whose regions hold no pixel is left
    /// out. nil when no eye is left.
    public static func underEye(input: RGBImage, output: RGBImage, face: BeautyFace) -> [UnderEyeFigures]? {
        let eyes = UnderEyeGeometry(faces: [face]).eyes
        let fine = max(0.5, 0.01 * face.interOcularDistance)
        var figures: [UnderEyeFigures] = []
        for eye in eyes {
            var trough = (before: 0.0, after: 0.0, count: 0), cheek = (before: 0.0, after: 0.0, count: 0)
            var energy = (before: 0.0, after: 0.0)
            let crop = cropRegion(around: eye.trough + eye.cheek, margin: 3 * fine + 2, width: input.width, height: input.height)
            let before = input.cropped(to: crop), after = output.cropped(to: crop)
            let bandBefore = PlaneImage.combine(before.luma, before.luma.blurred(sigma: fine), -)
            let bandAfter = PlaneImage.combine(after.luma, after.luma.blurred(sigma: fine), -)
            for row in 0..<crop.height {
                for column in 0..<crop.width {
                    let p = SIMD2(Float(crop.x + column) + 0.5, Float(crop.y + row) + 0.5)
                    let i = row * crop.width + column
                    if eye.isCore(p) {
                        trough.before += lab(before.pixels[i]).x
                        trough.after += lab(after.pixels[i]).x
                        trough.count += 1
                        energy.before += Double(bandBefore.values[i] * bandBefore.values[i])
                        energy.after += Double(bandAfter.values[i] * bandAfter.values[i])
                    } else if RegionMask.signedDistance(p, eye.trough) > 0, RegionMask.signedDistance(p, eye.cheek) < 0 {
                        cheek.before += lab(before.pixels[i]).x
                        cheek.after += lab(after.pixels[i]).x
                        cheek.count += 1
                    }
                }
            }
            guard trough.count > 0, cheek.count > 0, energy.before > 0 else { continue }
            let (t, c) = (Double(trough.count), Double(cheek.count))
            figures.append(UnderEyeFigures(gapBefore: cheek.before / c - trough.before / t, gapAfter: cheek.after / c - trough.after / t,
                                           fineBand: energy.after / energy.before, troughPixels: trough.count, cheekPixels: cheek.count))
        }
        return figures.isEmpty ? nil : figures
    }

    /// Largest change of any channel at the pixels on or outside every open eye's trough loop
    /// (where the under-eye weight is 0: bit-exact there); nil when there is no such pixel.
    public static func changeOutsideUnderEyes(input: RGBImage, output: RGBImage, faces: [BeautyFace]) -> Float? {
        let troughs = UnderEyeGeometry(faces: faces).eyes.map(\.trough)
        let boxes = troughs.map { cropRegion(around: $0, margin: 1, width: input.width, height: input.height) }
        var worst: Float = 0, counted = 0
        for y in 0..<input.height {
            for x in 0..<input.width {
                let p = SIMD2(Float(x) + 0.5, Float(y) + 0.5)
                if zip(troughs, boxes).contains(where: { $1.contains(x: x, y: y) && RegionMask.signedDistance(p, $0) < 0 }) { continue }
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

    /// What shine control did to one face's forehead and nose.
    public struct ShineFigures: Sendable {
        /// 99th percentile of Y' over the forehead and nose discs, in and out.
        public let peakIn: Double
        public let peakOut: Double
        /// Fine-band (Y' - G_f(Y'), M6's band) energy out / in over the same discs.
        public let fineBand: Double
        public let pixels: Int
    }

    /// Centre of the nose disc: mesh point 4, the top of the nose tip, where a nose's highlight
    /// sits; a disc of 0.12 IOD around it reaches from the tip's front up the lower bridge and
    /// stays clear of the nostrils (point 1, the tip's front, lies on the nostril band's edge).
    public static let noseCentre = 4

    /// Shine control on one face, in the M5/M6 disc style: discs of radius 0.12 IOD around
    /// mesh points 151 (forehead) and `noseCentre`. nil when the discs hold no pixel or no
    /// fine detail.
    public static func shineReduction(input: RGBImage, output: RGBImage, face: BeautyFace) -> ShineFigures? {
        let iod = face.interOcularDistance
        let points = [MeshRegion.foreheadCentre, noseCentre]
        let centres = points.map { face.landmarks[$0] }
        let crop = cropRegion(around: centres, margin: 0.12 * iod + 1, width: input.width, height: input.height)
        let inside = RegionMask.discs(centres, radius: 0.12 * iod, in: crop)
        let before = input.cropped(to: crop).luma.values, after = output.cropped(to: crop).luma.values
        let lumaIn = zip(before, inside).filter(\.1).map(\.0), lumaOut = zip(after, inside).filter(\.1).map(\.0)
        guard !lumaIn.isEmpty else { return nil }
        let fine = max(0.5, 0.01 * iod)
        guard let ratio = bandRatio(input: input, output: output, face: face, margin: 3 * fine + 2, points: points, band: { luma in
            PlaneImage.combine(luma, luma.blurred(sigma: fine), -)
        }) else { return nil }
        return ShineFigures(peakIn: Double(percentile(lumaIn, 0.99)), peakOut: Double(percentile(lumaOut, 0.99)),
                            fineBand: ratio, pixels: lumaIn.count)
    }

    /// Each value minus the mean of its 5x5 neighbourhood (clamped at the plane's edges).
    static func fineDetail(_ values: [Double], width: Int) -> [Double] {
        let height = values.count / width
        return values.indices.map { i in
            let x = i % width, y = i / width
            var sum = 0.0
            for dy in -2...2 { for dx in -2...2 {
                sum += values[min(max(y + dy, 0), height - 1) * width + min(max(x + dx, 0), width - 1)]
            } }
            return values[i] - sum / 25
        }
    }

    static func lab(_ pixel: SIMD3<Float>) -> SIMD3<Double> {
        ColourDifference.lab(fromSRGB: SIMD3(Double(pixel.x), Double(pixel.y), Double(pixel.z)))
    }
}
