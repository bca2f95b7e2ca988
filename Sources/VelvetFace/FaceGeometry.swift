import Foundation
import VelvetNN

/// An axis-aligned rectangle in pixels of the upright frame (top-left origin, y down).
public struct FaceBox: Sendable, Equatable, Codable {
    public var x: Float, y: Float, width: Float, height: Float

    public init(x: Float, y: Float, width: Float, height: Float) {
        (self.x, self.y, self.width, self.height) = (x, y, width, height)
    }

    /// The smallest box around `points`.
    public init(bounding points: some Collection<SIMD2<Float>>) {
        let low = points.reduce(SIMD2<Float>(repeating: .infinity)) { pointwiseMin($0, $1) }
        let high = points.reduce(SIMD2<Float>(repeating: -.infinity)) { pointwiseMax($0, $1) }
        self.init(x: low.x, y: low.y, width: high.x - low.x, height: high.y - low.y)
    }

    public var centre: SIMD2<Float> { SIMD2(x + width / 2, y + height / 2) }
    public var area: Float { max(width, 0) * max(height, 0) }

    /// Intersection over union (0 when either box is empty).
    public func intersectionOverUnion(_ other: FaceBox) -> Float {
        let left = max(x, other.x), top = max(y, other.y)
        let right = min(x + width, other.x + other.width), bottom = min(y + height, other.y + other.height)
        let intersection = max(right - left, 0) * max(bottom - top, 0)
        let union = area + other.area - intersection
        return union > 0 ? intersection / union : 0
    }

    /// The intersection's share of the smaller box (1 when one box lies inside the other).
    public func intersectionOverSmaller(_ other: FaceBox) -> Float {
        let left = max(x, other.x), top = max(y, other.y)
        let right = min(x + width, other.x + other.width), bottom = min(y + height, other.y + other.height)
        let smaller = min(area, other.area)
        return smaller > 0 ? max(right - left, 0) * max(bottom - top, 0) / smaller : 0
    }
}

/// The rotated square of the frame the mesh model sees (MediaPipe's face ROI), in pixels:
/// centre, side and rotation (radians; positive turns the square clockwise on screen).
public struct FaceROI: Sendable, Equatable {
    public var centre: SIMD2<Float>
    public var side: Float
    public var rotation: Float

    /// MediaPipe grows the face box by this much (square on its long side) for the mesh.
    public static let scale: Float = 1.5

    public init(centre: SIMD2<Float>, side: Float, rotation: Float) {
        (self.centre, self.side, self.rotation) = (centre, side, rotation)
    }

    /// From a detection: box centre, rotation from the right eye to the left eye keypoint.
    public init(detection: FaceDetection) {
        self.init(box: detection.box, from: detection.keypoints[0], to: detection.keypoints[1])
    }

    /// From a face's landmarks (tracking): their bounding box, rotation from point 33 to 263.
    public init(landmarks: [SIMD2<Float>]) {
        self.init(box: FaceBox(bounding: landmarks), from: landmarks[33], to: landmarks[263])
    }

    private init(box: FaceBox, from start: SIMD2<Float>, to end: SIMD2<Float>) {
        centre = box.centre
        side = Self.scale * max(box.width, box.height)
        rotation = Self.normalised(-atan2f(-(end.y - start.y), end.x - start.x))
    }

    /// An angle in [-pi, pi).
    static func normalised(_ angle: Float) -> Float {
        angle - 2 * .pi * floorf((angle + .pi) / (2 * .pi))
    }

    /// The axis-aligned square of the same centre and side (MediaPipe compares ROIs so).
    public var unrotatedBox: FaceBox {
        FaceBox(x: centre.x - side / 2, y: centre.y - side / 2, width: side, height: side)
    }

    /// Frame position of a point of the ROI given in 0...1 square coordinates.
    public func framePoint(_ unit: SIMD2<Float>) -> SIMD2<Float> {
        let (c, s) = (cosf(rotation), sinf(rotation))
        let d = (unit - 0.5) * side
        return centre + SIMD2(c * d.x - s * d.y, s * d.x + c * d.y)
    }

    /// The map from a `size` x `size` tensor's pixel centres to frame pixels, corners on
    /// corners (pixel-edge convention), for `NNImageToTensor`.
    public func tensorTransform(size: Int) -> NNImageToTensor.Transform {
        let (c, s) = (cosf(rotation), sinf(rotation))
        let step = side / Float(size)
        let origin = framePoint(SIMD2(0, 0))
        return NNImageToTensor.Transform(a: step * c, b: -step * s, c: origin.x, d: step * s, e: step * c, f: origin.y)
            .sampledAsMediaPipe
    }
}

extension NNImageToTensor.Transform {
    /// The same corner-to-corner map with MediaPipe's sampling: its CPU ImageToTensor warps
    /// with OpenCV, where pixel i sits at coordinate i rather than i + 0.5, in the tensor and
    /// in the image alike. So tensor pixel centre u samples A(u - 0.5) + 0.5 instead of A(u)
    /// (a shift of half a pixel minus half a tensor pixel; 1.5 px when shrinking 4x). Without
    /// it detection boxes land ~2 px and meshes ~0.5 px away from MediaPipe's.
    var sampledAsMediaPipe: NNImageToTensor.Transform {
        var shifted = self
        shifted.c += 0.5 - 0.5 * (a + b)
        shifted.f += 0.5 - 0.5 * (d + e)
        return shifted
    }
}
