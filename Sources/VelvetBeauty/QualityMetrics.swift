import VelvetGPU
import Foundation
import VelvetFace

/// The quality metrics of `docs/QUALITY.md` that judge the skin stages (M3-M9,
/// M14), computed on the CPU from downloaded images. Regions come from the input frame's
/// mesh; IOD is the distance between mesh points 33 and 263. A metric whose region is
/// empty returns nil ("cannot be computed"), never a pass.
public enum QualityMetrics {
    // MARK: - Exact comparisons (M3, M9, M14)

    /// Largest absolute byte difference over all channels (M9, M14), or over the pixels
    /// whose weight is exactly 0 when `weights` (one per pixel) is given (M3).
    public static func maxAbsDifference(_ a: [UInt8], _ b: [UInt8], channels: Int = 4, weights: [Float]? = nil) -> Int {
        precondition(a.count == b.count, "images differ in size")
        var worst = 0
        for i in 0..<a.count {
            if let weights, weights[i / channels] != 0 { continue }
            worst = max(worst, abs(Int(a[i]) - Int(b[i])))
        }
        return worst
    }

    // MARK: - Region metrics

    /// M4: mean SSIM of Y' between output and input inside the eye, brow and lip polygons,
    /// each grown by 0.1 IOD (Gaussian window sigma 1.5 px, C1 = 0.01^2, C2 = 0.03^2).
    public static func featureSSIM(input: RGBImage, output: RGBImage, face: BeautyFace) -> Double? {
        let iod = face.interOcularDistance
        let regions: [MeshRegion] = [.rightEye, .leftEye, .rightBrow, .leftBrow, .lipsOuter]
        let polygons = regions.map { face.polygon($0) }
        let crop = cropRegion(around: polygons.flatMap { $0 }, margin: 0.1 * iod + 8, width: input.width, height: input.height)
        let x = input.cropped(to: crop).luma, y = output.cropped(to: crop).luma
        let inside = RegionMask.polygons(polygons, grownBy: 0.1 * iod, in: crop)
        let map = ssimMap(x, y)
        return mean(map.values, where: inside)
    }

    /// M5: mid-band energy ratio out/in in the cheek and forehead discs (radius 0.12 IOD
    /// around points 50, 280, 151); band G_f(Y') - G_m(Y'), sigma_f = max(0.5, 0.01 IOD) px,
    /// sigma_m = 0.06 IOD.
    public static func midBandRatio(input: RGBImage, output: RGBImage, face: BeautyFace) -> Double? {
        let iod = face.interOcularDistance
        let fine = max(0.5, 0.01 * iod), middle = 0.06 * iod
        return bandRatio(input: input, output: output, face: face, margin: 3 * middle + 2) { luma in
            PlaneImage.combine(luma.blurred(sigma: fine), luma.blurred(sigma: middle), -)
        }
    }

    /// M6: fine-band energy ratio out/in in the same discs; band Y' - G_f(Y').
    public static func fineBandRatio(input: RGBImage, output: RGBImage, face: BeautyFace) -> Double? {
        let iod = face.interOcularDistance
        let fine = max(0.5, 0.01 * iod)
        return bandRatio(input: input, output: output, face: face, margin: 3 * fine + 2) { luma in
            PlaneImage.combine(luma, luma.blurred(sigma: fine), -)
        }
    }

    /// M7: 99th percentile of |Y'out - Y'in| in the band 0...0.15 IOD outside the face oval
    /// where the person mask (probability over the whole frame, any resolution) is < 0.5.
    /// Returns the value and how many pixels the band held.
    public static func halo(input: RGBImage, output: RGBImage, face: BeautyFace,
                            personMask: PlaneImage) -> (value: Double, pixels: Int)? {
        let iod = face.interOcularDistance
        let oval = face.polygon(.faceOval)
        let crop = cropRegion(around: oval, margin: 0.15 * iod + 2, width: input.width, height: input.height)
        let band = RegionMask.band(outside: oval, width: 0.15 * iod, in: crop)
        let xScale = Float(personMask.width) / Float(input.width), yScale = Float(personMask.height) / Float(input.height)
        let a = input.cropped(to: crop).luma, b = output.cropped(to: crop).luma
        var differences: [Float] = []
        for row in 0..<crop.height {
            for column in 0..<crop.width where band[row * crop.width + column] {
                let px = Float(crop.x + column) + 0.5, py = Float(crop.y + row) + 0.5
                guard personMask.sample(x: px * xScale, y: py * yScale) < 0.5 else { continue }
                differences.append(abs(a[column, row] - b[column, row]))
            }
        }
        guard !differences.isEmpty else { return nil }
        return (Double(percentile(differences, 0.99)), differences.count)
    }

    /// M8: CIEDE2000 between the mean Lab colour of a cheek disc (radius 0.12 IOD around
    /// points 50 and 280) in the input and in the output; the worse of the two cheeks. The
    /// skin keeps its tone while its blotches even out (evening them out moves no mean).
    public static func colourShift(input: RGBImage, output: RGBImage, face: BeautyFace) -> Double? {
        let iod = face.interOcularDistance
        let centres = [face.landmarks[MeshRegion.cheekCentres.right], face.landmarks[MeshRegion.cheekCentres.left]]
        var worst: Double?
        for centre in centres {
            let crop = cropRegion(around: [centre], margin: 0.12 * iod + 1, width: input.width, height: input.height)
            let inside = RegionMask.discs([centre], radius: 0.12 * iod, in: crop)
            guard let a = meanLab(input.cropped(to: crop), where: inside),
                  let b = meanLab(output.cropped(to: crop), where: inside) else { continue }
            worst = max(worst ?? 0, ColourDifference.ciede2000(a, b))
        }
        return worst
    }

    /// M3: largest absolute byte difference (RGB) over the pixels outside every face oval
    /// grown by 1.0 IOD: a region fixed by the meshes, not by the blend's own weights.
    /// nil when no pixel lies that far from every face.
    public static func backgroundDifference(input: [UInt8], output: [UInt8], width: Int, height: Int,
                                            faces: [BeautyFace]) -> Int? {
        precondition(input.count == width * height * 4 && output.count == input.count, "images differ in size")
        let ovals = faces.map { (polygon: $0.polygon(.faceOval), margin: $0.interOcularDistance) }
        let boxes = ovals.map { oval in
            cropRegion(around: oval.polygon, margin: oval.margin + 1, width: width, height: height)
        }
        var worst = 0, counted = 0
        for y in 0..<height {
            for x in 0..<width {
                let p = SIMD2(Float(x) + 0.5, Float(y) + 0.5)
                let nearFace = zip(ovals, boxes).contains { oval, box in
                    box.contains(x: x, y: y) && RegionMask.signedDistance(p, oval.polygon) <= oval.margin
                }
                if nearFace { continue }
                counted += 1
                let i = 4 * (y * width + x)
                for c in 0..<3 { worst = max(worst, abs(Int(input[i + c]) - Int(output[i + c]))) }
            }
        }
        return counted == 0 ? nil : worst
    }

    /// M16: how many of the faces present (their true boxes) a face was found for: a found
    /// face counts for the first unclaimed true box its landmark box's centre lies in.
    /// Returns the matches as (true index, found index) and the count found / present.
    public static func facesFound(found: [FaceBox], present: [FaceBox]) -> (matches: [(truth: Int, found: Int)], found: Int, present: Int) {
        var claimed = Set<Int>()
        var matches: [(truth: Int, found: Int)] = []
        for (index, box) in found.enumerated() {
            let centre = box.centre
            guard let truth = present.indices.first(where: { candidate in
                !claimed.contains(candidate) && centre.x >= present[candidate].x && centre.y >= present[candidate].y
                    && centre.x <= present[candidate].x + present[candidate].width
                    && centre.y <= present[candidate].y + present[candidate].height
            }) else { continue }
            claimed.insert(truth)
            matches.append((truth, index))
        }
        return (matches, matches.count, present.count)
    }

    static func meanLab(_ image: RGBImage, where inside: [Bool]) -> SIMD3<Double>? {
        var total = SIMD3<Double>.zero, count = 0
        for i in 0..<inside.count where inside[i] {
            let p = image.pixels[i]
            total += ColourDifference.lab(fromSRGB: SIMD3(Double(p.x), Double(p.y), Double(p.z)))
            count += 1
        }
        return count == 0 ? nil : total / Double(count)
    }

    /// PSNR in dB between two images over the pixels where `inside` is true (RGB, peak 1).
    public static func psnr(_ a: RGBImage, _ b: RGBImage, where inside: [Bool]) -> Double? {
        var total = 0.0, count = 0
        for i in 0..<a.pixels.count where inside[i] {
            let d = a.pixels[i] - b.pixels[i]
            total += Double((d * d).sum())
            count += 3
        }
        guard count > 0 else { return nil }
        return total == 0 ? .infinity : 10 * log10(Double(count) / total)
    }

    // MARK: - Building blocks

    /// SSIM map of two planes (Gaussian window sigma 1.5, C1 = 0.01^2, C2 = 0.03^2 for a peak of 1).
    public static func ssimMap(_ x: PlaneImage, _ y: PlaneImage) -> PlaneImage {
        let sigma: Float = 1.5
        let c1: Float = 0.0001, c2: Float = 0.0009
        let mx = x.blurred(sigma: sigma), my = y.blurred(sigma: sigma)
        let xx = PlaneImage.combine(x, x, *).blurred(sigma: sigma)
        let yy = PlaneImage.combine(y, y, *).blurred(sigma: sigma)
        let xy = PlaneImage.combine(x, y, *).blurred(sigma: sigma)
        var values = [Float](repeating: 0, count: x.values.count)
        for i in 0..<values.count {
            let ux = mx.values[i], uy = my.values[i]
            let vx = xx.values[i] - ux * ux, vy = yy.values[i] - uy * uy, cxy = xy.values[i] - ux * uy
            values[i] = ((2 * ux * uy + c1) * (2 * cxy + c2)) / ((ux * ux + uy * uy + c1) * (vx + vy + c2))
        }
        return PlaneImage(width: x.width, height: x.height, values: values)
    }

    /// Energy ratio sum(band(out)^2) / sum(band(in)^2) over the discs around mesh points
    /// `points` (the cheek and forehead discs unless told).
    static func bandRatio(input: RGBImage, output: RGBImage, face: BeautyFace, margin: Float,
                          points: [Int] = [MeshRegion.cheekCentres.right, MeshRegion.cheekCentres.left, MeshRegion.foreheadCentre],
                          band: (PlaneImage) -> PlaneImage) -> Double? {
        let iod = face.interOcularDistance
        let centres = points.map { face.landmarks[$0] }
        let crop = cropRegion(around: centres, margin: 0.12 * iod + margin, width: input.width, height: input.height)
        let inside = RegionMask.discs(centres, radius: 0.12 * iod, in: crop)
        let a = band(input.cropped(to: crop).luma), b = band(output.cropped(to: crop).luma)
        var energyIn = 0.0, energyOut = 0.0
        for i in 0..<inside.count where inside[i] {
            energyIn += Double(a.values[i] * a.values[i])
            energyOut += Double(b.values[i] * b.values[i])
        }
        guard energyIn > 0 else { return nil }
        return energyOut / energyIn
    }

    /// Bounding box of `points` grown by `margin`, clamped to the image.
    static func cropRegion(around points: [SIMD2<Float>], margin: Float, width: Int, height: Int) -> PixelRegion {
        let low = points.reduce(SIMD2<Float>(repeating: .infinity)) { pointwiseMin($0, $1) } - margin
        let high = points.reduce(SIMD2<Float>(repeating: -.infinity)) { pointwiseMax($0, $1) } + margin
        let x0 = max(0, Int(low.x.rounded(.down))), y0 = max(0, Int(low.y.rounded(.down)))
        let x1 = min(width, Int(high.x.rounded(.up))), y1 = min(height, Int(high.y.rounded(.up)))
        return PixelRegion(x: x0, y: y0, width: max(1, x1 - x0), height: max(1, y1 - y0))
    }

    static func mean(_ values: [Float], where inside: [Bool]) -> Double? {
        var total = 0.0, count = 0
        for i in 0..<values.count where inside[i] {
            total += Double(values[i])
            count += 1
        }
        return count == 0 ? nil : total / Double(count)
    }

    /// The q-quantile (0...1) by nearest rank.
    public static func percentile(_ values: [Float], _ q: Double) -> Float {
        let sorted = values.sorted()
        let rank = Int((q * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }
}

/// Pixel-centre region masks over a crop of the frame (true = inside).
public enum RegionMask {
    /// Inside any polygon, or within `grownBy` pixels of one.
    public static func polygons(_ polygons: [[SIMD2<Float>]], grownBy margin: Float, in crop: PixelRegion) -> [Bool] {
        map(crop) { p in polygons.contains { signedDistance(p, $0) <= margin } }
    }

    /// Outside the polygon by at most `width` pixels.
    public static func band(outside polygon: [SIMD2<Float>], width: Float, in crop: PixelRegion) -> [Bool] {
        map(crop) { p in
            let d = signedDistance(p, polygon)
            return d > 0 && d <= width
        }
    }

    /// Within `radius` of any centre.
    public static func discs(_ centres: [SIMD2<Float>], radius: Float, in crop: PixelRegion) -> [Bool] {
        map(crop) { p in centres.contains { c in ((p - c) * (p - c)).sum() <= radius * radius } }
    }

    static func map(_ crop: PixelRegion, _ test: (SIMD2<Float>) -> Bool) -> [Bool] {
        var result = [Bool](repeating: false, count: crop.width * crop.height)
        for row in 0..<crop.height {
            for column in 0..<crop.width {
                result[row * crop.width + column] = test(SIMD2(Float(crop.x + column) + 0.5, Float(crop.y + row) + 0.5))
            }
        }
        return result
    }

    /// Signed distance to a closed polygon, negative inside (even-odd rule), as in the mask kernel.
    public static func signedDistance(_ p: SIMD2<Float>, _ polygon: [SIMD2<Float>]) -> Float {
        var nearest = Float.infinity
        var inside = false
        var a = polygon[polygon.count - 1]
        for b in polygon {
            let edge = b - a, toP = p - a
            let along = min(max((toP * edge).sum() / max((edge * edge).sum(), 1e-12), 0), 1)
            let offset = toP - edge * along
            nearest = min(nearest, (offset * offset).sum())
            if (a.y > p.y) != (b.y > p.y), p.x < a.x + (p.y - a.y) * edge.x / edge.y { inside.toggle() }
            a = b
        }
        return inside ? -nearest.squareRoot() : nearest.squareRoot()
    }
}
