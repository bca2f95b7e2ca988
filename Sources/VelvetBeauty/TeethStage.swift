import VelvetFace
import VelvetGPU
import VelvetKernels

/// Where teeth whitening may act on each face, rebuilt from every frame's mesh and packed
/// for `teeth_whiten.comp` (layout documented there): the mouth opening (the inner lip
/// loop, feathered) of each face whose mouth is open, and the contours of its open eyes
/// (where the sclera's lightness, the whitening's ceiling, is measured).
public struct TeethGeometry: Sendable {
    public struct FaceShapes: Sendable {
        public let innerLips: [SIMD2<Float>]
        /// The open eyes' contours (a closed eye is left out).
        public let eyes: [[SIMD2<Float>]]
        public let feather: Float
        public let weight: Float
        /// What the mouth's measurement belongs to (`MeasurementMemory`).
        public let key: MeasurementKey?
    }

    /// The opening's feather, a fraction of the inter-ocular distance (the lipstick's edge).
    public static let featherShare: Float = 0.012
    /// A mouth is open when the inner loop's mean height (area / width) is at least this share
    /// of its width: a closed mouth's inner loop is a seam a pixel or two high.
    public static let openMouthRatio: Float = 0.06
    /// An eye is open when its contour's height is at least this share of its width.
    public static let openEyeRatio: Float = 0.18

    static let blockHeader = 18
    static let eyeCorners = [(33, 133, 159, 145), (263, 362, 386, 374)]

    public let faces: [FaceShapes]

    public init(faces: [BeautyFace]) {
        self.faces = faces.compactMap { face in
            let inner = face.polygon(.lipsInner)
            guard face.weight > 0, Self.isOpen(inner, corners: (face.landmarks[78], face.landmarks[308])) else { return nil }
            return FaceShapes(innerLips: inner, eyes: Self.openEyes(of: face), feather: max(0.5, Self.featherShare * face.interOcularDistance),
                              weight: face.weight, key: .of(face, part: 0))
        }
    }

    /// The contours of the face's open eyes: height (159-145, 386-374) at least
    /// `openEyeRatio` of the width (33-133, 263-362).
    public static func openEyes(of face: BeautyFace) -> [[SIMD2<Float>]] {
        openEyeSides(of: face).map(\.contour)
    }

    /// The same, each with its side (0 the right eye, 1 the left).
    public static func openEyeSides(of face: BeautyFace) -> [(side: Int, contour: [SIMD2<Float>])] {
        zip([MeshRegion.rightEye, .leftEye], eyeCorners).enumerated().compactMap { side, eye in
            let (region, points) = eye
            let width = distance(face.landmarks[points.0], face.landmarks[points.1])
            let height = distance(face.landmarks[points.2], face.landmarks[points.3])
            return height >= openEyeRatio * width ? (side, face.polygon(region)) : nil
        }
    }

    /// Whether the inner lip loop encloses an opening: its area over its width (the mean
    /// height) against the width.
    static func isOpen(_ inner: [SIMD2<Float>], corners: (SIMD2<Float>, SIMD2<Float>)) -> Bool {
        let width = distance(corners.0, corners.1)
        guard width > 0 else { return false }
        var twiceArea: Float = 0
        for (a, b) in zip(inner, inner.dropFirst() + [inner[0]]) { twiceArea += a.x * b.y - b.x * a.y }
        return abs(twiceArea) / 2 / width >= openMouthRatio * width
    }

    static func distance(_ a: SIMD2<Float>, _ b: SIMD2<Float>) -> Float { ((a - b) * (a - b)).sum().squareRoot() }

    static func bounds(_ points: [SIMD2<Float>], grownBy margin: Float) -> (SIMD2<Float>, SIMD2<Float>) {
        let low = points.reduce(SIMD2<Float>(repeating: .infinity)) { pointwiseMin($0, $1) }
        let high = points.reduce(SIMD2<Float>(repeating: -.infinity)) { pointwiseMax($0, $1) }
        return (low - margin, high + margin)
    }

    /// Whitening weight's opening coverage at p (CPU reference of the kernel's), largest over faces.
    public func openingCoverage(at p: SIMD2<Float>) -> Float {
        faces.map { 1 - smoothstep(-$0.feather, $0.feather, RegionMask.signedDistance(p, $0.innerLips)) }.max() ?? 0
    }

    /// The frame pixels whitening may change (the open mouths, feathered), clamped to the
    /// frame; empty when there are none.
    public func region(width: Int, height: Int) -> PixelRegion {
        .covering(faces.map { Self.bounds($0.innerLips, grownBy: $0.feather + 1) }, width: width, height: height)
    }

    /// Floats for the kernel's geometry buffer: the face directory of `face_table.glsl` (its
    /// box: the feathered mouth opening), then each face's block (see `teeth_whiten.comp`).
    public func packed(width: Int, height: Int) -> [Float] {
        var directory: [Float] = [], blocks: [Float] = []
        let blocksStart = faces.count * 8
        func clampedBox(_ box: (SIMD2<Float>, SIMD2<Float>)) -> [Float] {
            let size = SIMD2(Float(width), Float(height))
            return [max(box.0.x, 0), max(box.0.y, 0), min(box.1.x, size.x), min(box.1.y, size.y)]
        }
        for face in faces {
            let mouth = clampedBox(Self.bounds(face.innerLips, grownBy: face.feather + 1))
            let eyeBox = face.eyes.isEmpty ? [0, 0, 0, 0] : clampedBox(Self.bounds(face.eyes.flatMap { $0 }, grownBy: 1))
            var block = mouth + [face.feather, face.weight, Float(Self.blockHeader), Float(face.innerLips.count)]
            var next = Self.blockHeader + 2 * face.innerLips.count
            for eye in 0..<2 {
                let count = eye < face.eyes.count ? face.eyes[eye].count : 0
                block += [Float(next), Float(count)]
                next += 2 * count
            }
            block += eyeBox + [0, 0]
            for point in face.innerLips + face.eyes.flatMap({ $0 }) { block += [point.x, point.y] }
            directory += [Float(blocksStart + blocks.count), Float(block.count), 0, 0] + mouth
            blocks += block
        }
        return directory + blocks
    }
}

/// Teeth whitening as a stage of the chain: per face, the teeth told from tongue, gums and
/// lips by this mouth's own colours (a GPU measurement, no readback), lightened towards the
/// sclera's lightness and never past it, and de-yellowed (`teeth_whiten.comp`). A closed
/// mouth, or one with no teeth class, changes nothing; with no open mouth the stage writes
/// nothing.
public typealias TeethStage = FeatureStage<TeethGeometry>

extension TeethGeometry: FeatureGeometry {
    public typealias Settings = TeethSettings
    public typealias Push = KernelLibrary.TeethWhitenPush
    public static var sectionName: String { "teeth" }
    public static var statsPerEntry: Int { 8 }
    /// The measurement reads the whole mouth, but before the pass that writes: that pass reads
    /// only the pixel it writes, so the stage can whiten its source in place.
    public static var isPointwise: Bool { true }
    public init(faces: [BeautyFace], width: Int, height: Int) { self.init(faces: faces) }
    public var entryCount: Int { faces.count }
    public var entryKeys: [MeasurementKey?] { faces.map(\.key) }
    public func region(width: Int, height: Int, showingMask: Bool) -> PixelRegion { region(width: width, height: height) }
}

private func smoothstep(_ edge0: Float, _ edge1: Float, _ x: Float) -> Float {
    let t = min(max((x - edge0) / (edge1 - edge0), 0), 1)
    return t * t * (3 - 2 * t)
}
