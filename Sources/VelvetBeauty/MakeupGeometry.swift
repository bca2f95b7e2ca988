import VelvetFace
import VelvetGPU

/// Where lipstick and blush go on each face, rebuilt from every frame's mesh, packed for
/// `makeup_apply.comp` (layout documented there).
///
/// Lips: the outer lip loop minus the inner loop (the mouth opening), edges feathered over
/// +-feather (a fraction of the inter-ocular distance). Blush: one ellipse per cheek,
/// centred a sixth of the way from the cheek point (50 / 280) toward the face side at eye
/// level (234 / 454), its major axis along that direction, semi-axes `size` and 0.65 x
/// `size` face sizes, so the patch turns and scales with the head.
public struct MakeupGeometry: Sendable {
    public struct Patch: Sendable, Equatable {
        public let centre: SIMD2<Float>
        /// Unit major and minor axes.
        public let major: SIMD2<Float>, minor: SIMD2<Float>
        public let semiMajor: Float, semiMinor: Float
    }

    public struct FaceShapes: Sendable {
        public let outerLips: [SIMD2<Float>]
        public let innerLips: [SIMD2<Float>]
        public let feather: Float
        public let cheeks: [Patch]
        /// The face's share of the makeup (`BeautyFace.weight`: a held face fades out).
        public let weight: Float
    }

    static let directoryStride = 8
    static let blockHeader = 22
    static let blushMinorRatio: Float = 0.65
    static let cheekPoints = [(50, 234), (280, 454)]

    public let faces: [FaceShapes]
    private let lipstick: Bool
    private let blush: Bool

    public init(faces: [BeautyFace], settings: MakeupSettings) {
        lipstick = settings.lipstick.strength > 0
        blush = settings.blush.strength > 0
        guard lipstick || blush else { self.faces = []; return }
        self.faces = faces.filter { $0.weight > 0 }.map { face in
            let cheeks = Self.cheekPoints.map { cheek, side -> Patch in
                let point = face.landmarks[cheek], toSide = face.landmarks[side] - point
                let distance = (toSide * toSide).sum().squareRoot()
                let major = distance > 0 ? toSide / distance : SIMD2<Float>(1, 0)
                let a = settings.blush.size * face.faceSize
                return Patch(centre: point + toSide / 6, major: major, minor: SIMD2(-major.y, major.x),
                             semiMajor: a, semiMinor: a * Self.blushMinorRatio)
            }
            return FaceShapes(outerLips: face.polygon(.lipsOuter), innerLips: face.polygon(.lipsInner),
                              feather: max(0.5, settings.lipstick.feather * face.interOcularDistance), cheeks: cheeks,
                              weight: face.weight)
        }
    }

    /// Lipstick coverage at p (CPU reference of the kernel's, 0...1), largest over faces.
    public func lipCoverage(at p: SIMD2<Float>) -> Float {
        faces.map { face in
            let outer = RegionMask.signedDistance(p, face.outerLips)
            let inner = RegionMask.signedDistance(p, face.innerLips)
            return face.weight * ((1 - smoothstep(-face.feather, face.feather, outer)) * smoothstep(-face.feather, face.feather, inner))
        }.max() ?? 0
    }

    /// Boxes (min, max) of what each face's makeup can touch.
    private func boxes(_ face: FaceShapes) -> (lips: (SIMD2<Float>, SIMD2<Float>), all: (SIMD2<Float>, SIMD2<Float>)) {
        let lipLow = face.outerLips.reduce(SIMD2<Float>(repeating: .infinity)) { pointwiseMin($0, $1) } - face.feather
        let lipHigh = face.outerLips.reduce(SIMD2<Float>(repeating: -.infinity)) { pointwiseMax($0, $1) } + face.feather
        var low = lipstick ? lipLow : SIMD2<Float>(repeating: .infinity)
        var high = lipstick ? lipHigh : SIMD2<Float>(repeating: -.infinity)
        if blush {
            for patch in face.cheeks {
                // Half-extents of the rotated ellipse's bounding box.
                let extent = SIMD2(((patch.major.x * patch.semiMajor) * (patch.major.x * patch.semiMajor)
                                    + (patch.minor.x * patch.semiMinor) * (patch.minor.x * patch.semiMinor)).squareRoot(),
                                   ((patch.major.y * patch.semiMajor) * (patch.major.y * patch.semiMajor)
                                    + (patch.minor.y * patch.semiMinor) * (patch.minor.y * patch.semiMinor)).squareRoot())
                low = pointwiseMin(low, patch.centre - extent)
                high = pointwiseMax(high, patch.centre + extent)
            }
        }
        return ((lipLow, lipHigh), (low, high))
    }

    /// The frame pixels makeup may change, clamped to the frame (empty when none).
    public func region(width: Int, height: Int) -> PixelRegion {
        pixels(covering: faces.map { boxes($0).all }, width: width, height: height)
    }

    /// The frame pixels whose centre lies in some face's lip box, with a pixel to spare
    /// (empty with lipstick off): outside it the lipstick covers nothing.
    func lipArea(width: Int, height: Int) -> PixelRegion {
        guard lipstick else { return PixelRegion(x: 0, y: 0, width: 0, height: 0) }
        return pixels(covering: faces.map { boxes($0).lips }, width: width, height: height)
    }

    /// The frame pixels of `boxes` (min, max; a pixel to spare), clamped to the frame.
    private func pixels(covering boxes: [(SIMD2<Float>, SIMD2<Float>)], width: Int, height: Int) -> PixelRegion {
        var result: PixelRegion? = nil
        for box in boxes {
            let x0 = Int(box.0.x.rounded(.down)) - 1, y0 = Int(box.0.y.rounded(.down)) - 1
            let x1 = Int(box.1.x.rounded(.up)) + 1, y1 = Int(box.1.y.rounded(.up)) + 1
            guard let clamped = PixelRegion(x: x0, y: y0, width: x1 - x0, height: y1 - y0).clamped(width: width, height: height) else { continue }
            result = result.map { $0.union(clamped) } ?? clamped
        }
        return result ?? PixelRegion(x: 0, y: 0, width: 0, height: 0)
    }

    /// Floats for the kernel's geometry buffer: the face directory of `face_table.glsl`
    /// (its box: what the face's makeup can touch), then per face a block of
    /// `blockHeader` floats: lip box x0 y0 x1 y1 (an empty box with lipstick off), feather,
    /// outer loop first float and count, inner loop first and count, two blush patches of
    /// 6 floats (centre x y, major axis / a, minor axis / b), the face's weight; then the
    /// loops' vertices.
    var packed: [Float] {
        var directory: [Float] = [], blocks: [Float] = []
        let blocksStart = faces.count * Self.directoryStride
        for face in faces {
            let (lips, all) = boxes(face)
            var block = lipstick ? [lips.0.x, lips.0.y, lips.1.x, lips.1.y] : [1, 1, 0, 0]
            block.append(face.feather)
            block += [Float(Self.blockHeader), Float(face.outerLips.count)]
            block += [Float(Self.blockHeader + 2 * face.outerLips.count), Float(face.innerLips.count)]
            for patch in face.cheeks {
                block += [patch.centre.x, patch.centre.y, patch.major.x / patch.semiMajor, patch.major.y / patch.semiMajor,
                          patch.minor.x / patch.semiMinor, patch.minor.y / patch.semiMinor]
            }
            block.append(face.weight)
            for point in face.outerLips + face.innerLips { block += [point.x, point.y] }
            directory += [Float(blocksStart + blocks.count), Float(block.count), 0, 0, all.0.x, all.0.y, all.1.x, all.1.y]
            blocks += block
        }
        return directory + blocks
    }
}

private func smoothstep(_ edge0: Float, _ edge1: Float, _ x: Float) -> Float {
    let t = min(max((x - edge0) / (edge1 - edge0), 0), 1)
    return t * t * (3 - 2 * t)
}
