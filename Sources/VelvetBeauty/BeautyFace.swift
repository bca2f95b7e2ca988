import VelvetFace

/// The geometry of one face the skin pipeline works from: MediaPipe's 468 mesh points in
/// frame pixels (top-left origin, y down), as the face tracker produces them.
///
/// Face size, the unit every face-relative length uses, is the longer side of the
/// face-oval polygon's bounding box (forehead top to chin, usually); the face centre is
/// that box's centre.
public struct BeautyFace: Sendable, Equatable {
    public let landmarks: [SIMD2<Float>]
    /// How much of the effect the face gets (0...1): 1 while the tracker sees it, less while
    /// it holds a face it lost (fading out rather than popping).
    public let weight: Float
    /// The tracker's number for the face (`Face.trackID`), which stays with it from frame to
    /// frame; nil for a still or a face not tracked. Per-face measurements are smoothed over
    /// frames by it (`MeasurementMemory`).
    public let track: Int?

    public init(landmarks: [SIMD2<Float>], weight: Float = 1, track: Int? = nil) throws {
        guard weight.isFinite, (0...1).contains(weight) else {
            throw BeautyError.invalidFace("face weight must be in 0...1, got \(weight)")
        }
        self.weight = weight
        self.track = track
        guard landmarks.count == MeshRegion.meshPointCount else {
            throw BeautyError.invalidFace("expected \(MeshRegion.meshPointCount) mesh points, got \(landmarks.count)")
        }
        guard landmarks.allSatisfy({ $0.x.isFinite && $0.y.isFinite }) else {
            throw BeautyError.invalidFace("mesh points must be finite numbers")
        }
        self.landmarks = landmarks
        guard MeshRegion.ovalIsLargeEnough(landmarks) else {
            throw BeautyError.invalidFace("face oval is smaller than \(Int(MeshRegion.minimumOvalSide)) px")
        }
        ovalBounds = MeshRegion.ovalBounds(landmarks)
    }

    /// Bounding box of the face-oval polygon.
    public let ovalBounds: (min: SIMD2<Float>, max: SIMD2<Float>)

    public static func == (a: BeautyFace, b: BeautyFace) -> Bool { a.landmarks == b.landmarks && a.weight == b.weight && a.track == b.track }

    /// The longer side of the face-oval bounding box, in pixels.
    public var faceSize: Float { max(ovalBounds.max.x - ovalBounds.min.x, ovalBounds.max.y - ovalBounds.min.y) }

    /// Centre of the face-oval bounding box.
    public var centre: SIMD2<Float> { (ovalBounds.min + ovalBounds.max) * 0.5 }

    /// No stage changes a pixel farther than this many inter-ocular distances outside the
    /// face oval (quality metric M3 checks everything beyond 1 IOD stays bit-exact).
    public static let reachBeyondOval: Float = 0.9

    /// Distance between the outer eye corners (mesh points 33 and 263).
    public var interOcularDistance: Float {
        let corners = MeshRegion.outerEyeCorners
        let d = landmarks[corners.right] - landmarks[corners.left]
        return (d * d).sum().squareRoot()
    }

    /// The region's polygon in frame pixels.
    public func polygon(_ region: MeshRegion) -> [SIMD2<Float>] {
        region.indices.map { landmarks[$0] }
    }

    /// The region's polygon scaled about its vertex centroid by 1 + `growth`.
    public func polygon(_ region: MeshRegion, grownBy growth: Float) -> [SIMD2<Float>] {
        let points = polygon(region)
        let centroid = points.reduce(.zero, +) / Float(points.count)
        return points.map { centroid + ($0 - centroid) * (1 + growth) }
    }

    /// The same face with every point moved by `scale` then `offset` (fixtures at another size).
    public func transformed(scale: Float, offset: SIMD2<Float> = .zero) throws -> BeautyFace {
        try BeautyFace(landmarks: landmarks.map { $0 * scale + offset })
    }
}
