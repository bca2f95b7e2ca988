import VelvetGPU

/// What spot removal remembers of the last frame (issue 17): every face's fill weights, in a
/// frame-sized image, and each tracked face's landmarks and region. `beauty_spots.comp` reads
/// the weights where a pixel was in the last frame, through the face's motion (an affine fit
/// of its mesh), and averages them with its own, so a spot moves with the face and a faint
/// one does not come and go with the noise. Two images alternate: one frame's weights are
/// read while the next frame's are written.
final class SpotMemory {
    /// How the kernel treats a face (`MEMORY_*` in `beauty_spots.comp`).
    enum Mode: Int32 {
        /// Not in the last frame (a new track, a still): the face's own weights.
        case none = 0
        /// Its landmarks repeat the last frame's: the weights repeat exactly.
        case held = 1
        /// Moved: averaged with the last frame's, read through the motion.
        case moved = 2
    }

    /// A face's recall: the mode, its last region, and the map from this frame's pixels to
    /// the last frame's (rows of an affine map).
    struct Recall {
        var mode: Mode
        var lastRegion: PixelRegion
        var warpX: SIMD4<Float>
        var warpY: SIMD4<Float>
    }

    private struct Sighting {
        let landmarks: [SIMD2<Float>]
        let region: PixelRegion
    }

    private let context: GPUContext
    private var weights: [GPUImage] = []
    /// Which of `weights` this frame writes.
    private var current = 0
    private var last: [Int: Sighting] = [:]
    private var seen: [Int: Sighting] = [:]

    init(context: GPUContext) {
        self.context = context
    }

    /// A new frame: what was seen becomes the last frame's.
    func beginFrame(width: Int, height: Int) throws {
        if weights.first.map({ $0.width != width || $0.height != height }) ?? true {
            weights = try (0..<2).map { _ in try GPUImage(context: context, width: width, height: height, format: .r16) }
            seen = [:]
        }
        last = seen
        seen = [:]
        current = 1 - current
    }

    /// Forgets every face (a frame without spot removal).
    func forget() {
        last = [:]
        seen = [:]
    }

    /// The last frame's weights and this frame's, once `beginFrame` ran.
    func images() throws -> (last: GPUImage, next: GPUImage) {
        guard weights.count == 2 else { throw BeautyError.invalidSettings("spot memory used before a frame began") }
        return (weights[1 - current], weights[current])
    }

    /// How `face`, treated over `region` in this frame, reads the last frame's weights; notes
    /// it for the next frame.
    func recall(_ face: BeautyFace, region: PixelRegion) -> Recall {
        let identity = Recall(mode: .none, lastRegion: region, warpX: [1, 0, 0, 0], warpY: [0, 1, 0, 0])
        guard let track = face.track else { return identity }
        defer { seen[track] = Sighting(landmarks: face.landmarks, region: region) }
        guard let before = last[track] else { return identity }
        if before.landmarks == face.landmarks { return Recall(mode: .held, lastRegion: before.region, warpX: [1, 0, 0, 0], warpY: [0, 1, 0, 0]) }
        guard let (x, y) = Self.affine(from: face.landmarks, to: before.landmarks) else { return identity }
        return Recall(mode: .moved, lastRegion: before.region, warpX: x, warpY: y)
    }

    /// The least-squares affine map taking `from` onto `to` (rows: x' = a x + b y + c); nil
    /// when the points are degenerate.
    static func affine(from: [SIMD2<Float>], to: [SIMD2<Float>]) -> (SIMD4<Float>, SIMD4<Float>)? {
        // Normal equations of [x y 1] m = x' and = y', in doubles about the points' mean.
        let count = Double(from.count)
        let mean = from.reduce(SIMD2<Double>.zero) { $0 + SIMD2<Double>($1) } / count
        var sxx = 0.0, sxy = 0.0, syy = 0.0
        var tx = SIMD2<Double>.zero, ty = SIMD2<Double>.zero, target = SIMD2<Double>.zero
        for (p, q) in zip(from, to) {
            let d = SIMD2<Double>(p) - mean, t = SIMD2<Double>(q)
            sxx += d.x * d.x; sxy += d.x * d.y; syy += d.y * d.y
            tx += d.x * t; ty += d.y * t; target += t
        }
        let determinant = sxx * syy - sxy * sxy
        guard determinant > 1e-9 * max(sxx * syy, 1e-30) else { return nil }
        // [a b] for each output coordinate, on centred inputs; the offset maps the mean.
        let a = (syy * tx - sxy * ty) / determinant, b = (sxx * ty - sxy * tx) / determinant
        let offset = target / count - a * mean.x - b * mean.y
        return (SIMD4(Float(a.x), Float(b.x), Float(offset.x), 0), SIMD4(Float(a.y), Float(b.y), Float(offset.y), 0))
    }
}
