import Foundation

/// Landmark filter settings: a One Euro filter (Casiez et al. 2012) on how the face's shape
/// changes, after its rigid motion has been followed exactly (see `LandmarkSmoother`).
/// Speeds are in inter-ocular distances per second, so the settings suit any resolution.
public struct LandmarkSmoothing: Sendable, Equatable {
    /// Cutoff (Hz) while the shape holds still: lower is steadier.
    public var minCutoff: Float
    /// How fast the cutoff rises with the speed of shape change (expressions): higher lags less.
    public var beta: Float
    /// Cutoff (Hz) of that speed estimate.
    public var derivativeCutoff: Float

    public init(minCutoff: Float = 1, beta: Float = 10, derivativeCutoff: Float = 1) {
        (self.minCutoff, self.beta, self.derivativeCutoff) = (minCutoff, beta, derivativeCutoff)
    }

    public static let standard = LandmarkSmoothing()
}

/// Filters one face's 468 points from frame to frame without lag on head motion.
///
/// Noise in the mesh is independent from point to point, while head motion moves every
/// point by one similarity transform. So each frame the last filtered mesh is first carried
/// by the similarity (shift, rotation, scale) that best maps it onto the new raw mesh, a
/// least-squares fit over 468 points whose own noise is ~20x below a single point's; that
/// follows any head motion at once. What remains (per-point residuals: noise, and real
/// shape change such as a mouth opening) goes through a One Euro low-pass whose cutoff
/// rises with the residuals' size, so expressions still follow within a frame or two.
struct LandmarkSmoother {
    let settings: LandmarkSmoothing
    private var previous: [SIMD3<Float>]?
    /// The raw landmarks `previous` was filtered from.
    private var previousRaw: [SIMD3<Float>]?
    private var speed: Float = 0
    private var lastTime: Double = 0

    init(settings: LandmarkSmoothing) {
        self.settings = settings
    }

    private static func alpha(cutoff: Float, interval: Float) -> Float {
        let tau = 1 / (2 * Float.pi * cutoff)
        return 1 / (1 + tau / interval)
    }

    /// Filters the raw landmarks of the frame at `time` (seconds). Landmarks the same as the
    /// last frame's give the same result: the filter holds rather than creep on towards them,
    /// so a still mesh renders a still face.
    mutating func filter(_ raw: [SIMD3<Float>], time: Double) -> [SIMD3<Float>] {
        if let previous, raw == previousRaw {
            lastTime = max(lastTime, time)
            return previous
        }
        previousRaw = raw
        guard let previous, previous.count == raw.count, raw.count > 263, time > lastTime else {
            self.previous = raw
            lastTime = time
            speed = 0
            return raw
        }
        let interval = Float(time - lastTime)
        lastTime = time
        let carried = Self.carry(previous, onto: raw)
        let iod = max(planarDistance(raw[33], raw[263]), 1)
        var residual: Float = 0
        for index in raw.indices { residual += planarDistance(raw[index], carried[index]) }
        let rawSpeed = residual / Float(raw.count) / iod / interval
        speed += Self.alpha(cutoff: settings.derivativeCutoff, interval: interval) * (rawSpeed - speed)
        let a = Self.alpha(cutoff: settings.minCutoff + settings.beta * speed, interval: interval)
        let filtered = zip(carried, raw).map { old, new in old + a * (new - old) }
        self.previous = filtered
        return filtered
    }

    /// `points` moved by the 2D similarity that maps them best (least squares) onto
    /// `target`; z is scaled by the same factor and shifted by the mean z change.
    static func carry(_ points: [SIMD3<Float>], onto target: [SIMD3<Float>]) -> [SIMD3<Float>] {
        let count = Float(points.count)
        let from = points.reduce(SIMD3<Float>.zero, +) / count
        let to = target.reduce(SIMD3<Float>.zero, +) / count
        var dot: Float = 0, cross: Float = 0, norm: Float = 0
        for (p, q) in zip(points, target) {
            let a = p - from, b = q - to
            dot += a.x * b.x + a.y * b.y
            cross += a.x * b.y - a.y * b.x
            norm += a.x * a.x + a.y * a.y
        }
        guard norm > 0 else { return target }
        let (c, s) = (dot / norm, cross / norm)
        let scale = (c * c + s * s).squareRoot()
        return points.map { p in
            let a = p - from
            return SIMD3(to.x + c * a.x - s * a.y, to.y + s * a.x + c * a.y, to.z + scale * a.z)
        }
    }
}

private func planarDistance(_ a: SIMD3<Float>, _ b: SIMD3<Float>) -> Float {
    let d = a - b
    return (d.x * d.x + d.y * d.y).squareRoot()
}
