import VelvetFace
import VelvetGPU

/// The reshape warp as a backward displacement field: output pixel p shows the input at
/// p + d(p). `reshape_warp.comp` evaluates exactly this formula; the CPU version here packs
/// its parameters and lets tests check the field (folds, reach, movement).
///
/// Per face, d is the sum of
/// - two eye magnifiers: d = -a (1 - r²/R²)² (p - c) for r = |p - c| < R, with c the eye
///   loop's centroid, R = `eyeRadius` x the eye's corner-to-corner width and a =
///   `maxEyeAmount` x strength. The radial map r -> r (1 - a (1 - r²/R²)²) is increasing for
///   a < 1 (its derivative is at least 1 - a), so the magnifier never folds; the centre is
///   magnified 1 / (1 - a) (1.33x at full strength) and the disc's edge not at all.
/// - jaw narrowing: anchors P_k on the lower face oval, each translated by t_k toward the
///   face centre (|t_k| = `maxSlim` x face size x strength x a per-anchor profile), with
///   the linear falloff w_k = max(0, 1 - |p - P_k| / rho), rho = `slimRadius` x face size:
///   d = -sum(w_k t_k) / max(1, sum(w_k)). Normalising by the weight sum where cones overlap
///   moves each anchor by about its own t_k rather than the sum of its neighbours'.
///
/// Each face's terms are scaled by its weight (`BeautyFace.weight`: a held face fades out).
///
/// Reach: every term is zero farther than rho (at most 0.9 IOD) from the face-oval polygon (the anchors lie on
/// it, and each eye radius is capped so its disc stays within rho of the oval), so pixels
/// farther than `slimRadius` face sizes (0.15) outside the face oval never move.
public struct ReshapeField: Sendable {
    /// Eye magnifier radius, in eye widths (outer to inner corner).
    public static let eyeRadius: Float = 1.0
    /// Magnifier amount a at strength 1.
    public static let maxEyeAmount: Float = 0.25
    /// Falloff radius rho of the jaw translations, in face sizes; also the documented reach.
    public static let slimRadius: Float = 0.15
    /// Largest jaw translation at strength 1, in face sizes.
    public static let maxSlim: Float = 0.035
    /// Jaw anchors (subject's right side, image left, from the ear down to the chin) with
    /// their share of the translation; the left side mirrors them.
    static let rightJaw: [(Int, Float)] = [(132, 0.45), (58, 0.8), (172, 1), (136, 1), (150, 0.8), (149, 0.5), (176, 0.25)]
    static let leftJaw: [(Int, Float)] = [(361, 0.45), (288, 0.8), (397, 1), (365, 1), (379, 0.8), (378, 0.5), (400, 0.25)]
    static let eyeCorners = (right: (33, 133), left: (263, 362))

    public struct Eye: Sendable, Equatable {
        public let centre: SIMD2<Float>
        public let radius: Float
        public let amount: Float
    }

    public struct Anchor: Sendable, Equatable {
        public let position: SIMD2<Float>
        /// Where the anchor's content moves (forward), in pixels.
        public let translation: SIMD2<Float>
    }

    public struct FaceTerms: Sendable {
        public let eyes: [Eye]
        public let anchors: [Anchor]
        public let rho: Float
        /// Pixels with a non-zero displacement lie inside (min, max).
        public let bounds: (min: SIMD2<Float>, max: SIMD2<Float>)
    }

    static let directoryStride = 8
    static let blockHeader = 11
    public let faces: [FaceTerms]

    /// Terms for every face; empty when both strengths are 0.
    public init(faces: [BeautyFace], settings: ReshapeSettings) {
        guard !settings.isIdentity else { self.faces = []; return }
        self.faces = faces.filter { $0.weight > 0 }.map { Self.terms(for: $0, settings: settings) }
    }

    private static func terms(for face: BeautyFace, settings: ReshapeSettings) -> FaceTerms {
        let rho = min(slimRadius * face.faceSize, BeautyFace.reachBeyondOval * face.interOcularDistance)
        let oval = face.polygon(.faceOval)
        var low = face.ovalBounds.min - rho, high = face.ovalBounds.max + rho
        var eyes: [Eye] = []
        if settings.eyes > 0 {
            let centres = [face.polygon(.rightEye), face.polygon(.leftEye)].map { $0.reduce(.zero, +) / Float($0.count) }
            let spacing = length(centres[0] - centres[1])
            for (index, corners) in [eyeCorners.right, eyeCorners.left].enumerated() {
                let centre = centres[index]
                let width = length(face.landmarks[corners.0] - face.landmarks[corners.1])
                // Capped so the two discs never overlap and each stays within rho of the oval.
                let depth = -RegionMask.signedDistance(centre, oval)
                let radius = min(eyeRadius * width, 0.45 * spacing, rho + depth)
                guard radius > 1 else { continue }
                eyes.append(Eye(centre: centre, radius: radius, amount: maxEyeAmount * settings.eyes * face.weight))
                low = pointwiseMin(low, centre - radius)
                high = pointwiseMax(high, centre + radius)
            }
        }
        var anchors: [Anchor] = []
        if settings.slim > 0 {
            let magnitude = maxSlim * face.faceSize * settings.slim * face.weight
            for (index, share) in rightJaw + leftJaw {
                let position = face.landmarks[index]
                let toCentre = face.centre - position
                let distance = length(toCentre)
                guard distance > 0 else { continue }
                anchors.append(Anchor(position: position, translation: toCentre / distance * magnitude * share))
            }
        }
        return FaceTerms(eyes: eyes, anchors: anchors, rho: rho, bounds: (low, high))
    }

    public var isIdentity: Bool { faces.allSatisfy { $0.eyes.isEmpty && $0.anchors.isEmpty } }

    /// The backward displacement at p (pixel centres are at integer + 0.5), away from the
    /// frame's edge (`reshape_warp.comp` also shrinks it near the edge, so nothing past it is read).
    public func displacement(at p: SIMD2<Float>) -> SIMD2<Float> {
        var d = SIMD2<Float>.zero
        for face in faces {
            guard p.x >= face.bounds.min.x, p.y >= face.bounds.min.y, p.x <= face.bounds.max.x, p.y <= face.bounds.max.y else { continue }
            for eye in face.eyes {
                let v = p - eye.centre
                let u = (v * v).sum() / (eye.radius * eye.radius)
                if u < 1 { d -= eye.amount * (1 - u) * (1 - u) * v }
            }
            var sum = SIMD2<Float>.zero, weights: Float = 0
            for anchor in face.anchors {
                let w = max(0, 1 - length(p - anchor.position) / face.rho)
                sum += w * anchor.translation
                weights += w
            }
            d -= sum / max(1, weights)
        }
        return d
    }

    /// Where the input point x ends up in the output (the inverse of the backward map,
    /// by fixed-point iteration y = x - d(y), which converges because d changes slowly).
    public func forward(_ x: SIMD2<Float>) -> SIMD2<Float> {
        var y = x
        for _ in 0..<60 { y = x - displacement(at: y) }
        return y
    }

    /// The frame pixels the warp may change, clamped to the frame (empty when none).
    public func region(width: Int, height: Int) -> PixelRegion {
        var result: PixelRegion? = nil
        for face in faces where !(face.eyes.isEmpty && face.anchors.isEmpty) {
            let x0 = Int(face.bounds.min.x.rounded(.down)) - 1, y0 = Int(face.bounds.min.y.rounded(.down)) - 1
            let x1 = Int(face.bounds.max.x.rounded(.up)) + 1, y1 = Int(face.bounds.max.y.rounded(.up)) + 1
            guard let box = PixelRegion(x: x0, y: y0, width: x1 - x0, height: y1 - y0).clamped(width: width, height: height) else { continue }
            result = result.map { $0.union(box) } ?? box
        }
        return result ?? PixelRegion(x: 0, y: 0, width: 0, height: 0)
    }

    /// The terms that can move a pixel of each `side` x `side` tile of `region` (from its
    /// origin): the eyes whose disc and the anchors whose reach come within a pixel of the
    /// tile. Tiles with none are left out: there the displacement is exactly zero and the
    /// warp's output is the copied frame. A term left out of a tile adds exactly zero to its
    /// pixels, and the kept ones stay in the field's order, so the sums are the same.
    struct Tiles {
        /// Per tile: its origin (x, y) and its terms' range in `terms` (start, count).
        var tiles: [SIMD4<Int32>] = []
        /// Per term: face << 16 | 1 << 15 for an anchor (0 for an eye) | its index.
        var terms: [UInt32] = []
    }

    func tiles(in region: PixelRegion, side: Int) -> Tiles {
        let all: [(term: UInt32, centre: SIMD2<Float>, reach: Float)] = faces.enumerated().flatMap { index, face in
            let faceBits = UInt32(index) << 16
            return face.eyes.enumerated().map { (faceBits | UInt32($0), $1.centre, $1.radius + 1) }
                + face.anchors.enumerated().map { (faceBits | 1 << 15 | UInt32($0), $1.position, face.rho + 1) }
        }
        let columns = (region.width + side - 1) / side, rows = (region.height + side - 1) / side
        guard columns > 0, rows > 0 else { return Tiles() }
        // Each term visits only the tiles of its own box (counted, then placed: the terms of a
        // tile stay in the field's order), so the cost follows the terms' reach, not the region.
        func visit(_ body: (Int, UInt32) -> Void) {
            for (term, centre, reach) in all {
                let low = (centre - reach - SIMD2(Float(region.x), Float(region.y))) / Float(side)
                let high = (centre + reach - SIMD2(Float(region.x), Float(region.y))) / Float(side)
                let x0 = max(0, Int(low.x.rounded(.down))), y0 = max(0, Int(low.y.rounded(.down)))
                let x1 = min(columns - 1, Int(high.x.rounded(.down))), y1 = min(rows - 1, Int(high.y.rounded(.down)))
                guard x0 <= x1, y0 <= y1 else { continue }
                for row in y0...y1 {
                    for column in x0...x1 {
                        let tileLow = SIMD2(Float(region.x + column * side), Float(region.y + row * side))
                        let outside = pointwiseMax(pointwiseMax(tileLow - centre, centre - (tileLow + Float(side))), .zero)
                        if (outside * outside).sum() < reach * reach { body(row * columns + column, term) }
                    }
                }
            }
        }
        var counts = [Int](repeating: 0, count: columns * rows)
        visit { tile, _ in counts[tile] += 1 }
        var result = Tiles()
        var starts = [Int](repeating: 0, count: columns * rows)
        var total = 0
        for tile in counts.indices where counts[tile] > 0 {
            starts[tile] = total
            result.tiles.append(SIMD4(Int32(region.x + tile % columns * side), Int32(region.y + tile / columns * side),
                                      Int32(total), Int32(counts[tile])))
            total += counts[tile]
        }
        result.terms = [UInt32](repeating: 0, count: total)
        visit { tile, term in
            result.terms[starts[tile]] = term
            starts[tile] += 1
        }
        return result
    }

    /// Floats for the kernel's geometry buffer: the face directory of `face_table.glsl`
    /// (its box: the pixels that can move), then per face a block of `blockHeader` floats:
    /// right eye cx cy 1/R^2 a, left eye cx cy 1/R^2 a, rho, anchor count, eye count;
    /// then the anchors, 4 floats each: position x y, forward translation x y.
    var packed: [Float] {
        var directory: [Float] = [], blocks: [Float] = []
        let blocksStart = faces.count * Self.directoryStride
        for face in faces {
            var block = [Float](repeating: 0, count: Self.blockHeader)
            for (slot, eye) in face.eyes.enumerated() {
                block[4 * slot] = eye.centre.x
                block[4 * slot + 1] = eye.centre.y
                block[4 * slot + 2] = 1 / (eye.radius * eye.radius)
                block[4 * slot + 3] = eye.amount
            }
            block[8] = face.rho
            block[9] = Float(face.anchors.count)
            block[10] = Float(face.eyes.count)
            for anchor in face.anchors {
                block += [anchor.position.x, anchor.position.y, anchor.translation.x, anchor.translation.y]
            }
            directory += [Float(blocksStart + blocks.count), Float(block.count), 0, 0,
                          face.bounds.min.x, face.bounds.min.y, face.bounds.max.x, face.bounds.max.y]
            blocks += block
        }
        return directory + blocks
    }
}

private func length(_ v: SIMD2<Float>) -> Float { (v * v).sum().squareRoot() }

