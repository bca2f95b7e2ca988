import Foundation
import VelvetNN

/// A square of the frame a detector looks at: the whole frame letterboxed (MediaPipe's
/// view), one tile of it at a higher scale, or the letterboxed frame turned by quarter
/// turns (faces lying sideways or upside down). The detector's outputs, in 0...1 units of
/// the square, map back to frame pixels through `framePoint`.
public struct DetectionView: Sendable, Equatable {
    /// The square in frame pixels; its rotation is a multiple of 90 degrees.
    public var square: FaceROI
    /// Sides of the square that lie inside the frame, in the view's own orientation
    /// (left, top, right, bottom): a face touching one is cut by the tile, and another,
    /// overlapping tile sees it whole.
    public var cutEdges: (left: Bool, top: Bool, right: Bool, bottom: Bool) = (false, false, false, false)

    public static func == (a: DetectionView, b: DetectionView) -> Bool {
        a.square == b.square && a.cutEdges == b.cutEdges
    }

    /// The whole frame centred in a square of side max(width, height), turned clockwise by
    /// `quarterTurns` x 90 degrees (0: MediaPipe's letterbox).
    public static func letterbox(width: Int, height: Int, quarterTurns: Int = 0) -> DetectionView {
        let side = Float(max(width, height))
        return DetectionView(square: FaceROI(centre: SIMD2(Float(width), Float(height)) / 2, side: side,
                                             rotation: Float(quarterTurns % 4) * .pi / 2))
    }

    /// A tile: the square of side `side` with its top-left corner at (x, y), turned
    /// clockwise by `quarterTurns` x 90 degrees about its centre. An edge is cut where it
    /// lies inside the frame (its midpoint is more than half a pixel from the frame's edge).
    public static func tile(x: Float, y: Float, side: Float, width: Int, height: Int, quarterTurns: Int = 0) -> DetectionView {
        var view = DetectionView(square: FaceROI(centre: SIMD2(x + side / 2, y + side / 2), side: side,
                                                 rotation: Float(quarterTurns % 4) * .pi / 2))
        let slack: Float = 0.5
        func inside(_ unit: SIMD2<Float>) -> Bool {
            let p = view.framePoint(unit)
            return p.x > slack && p.y > slack && p.x < Float(width) - slack && p.y < Float(height) - slack
        }
        view.cutEdges = (inside(SIMD2(0, 0.5)), inside(SIMD2(0.5, 0)), inside(SIMD2(1, 0.5)), inside(SIMD2(0.5, 1)))
        return view
    }

    /// Whether the view is a tile of a `width` x `height` frame, not the whole frame.
    func isTile(width: Int, height: Int) -> Bool { square.side < Float(max(width, height)) }

    /// Frame position of a point given in 0...1 units of the square.
    public func framePoint(_ unit: SIMD2<Float>) -> SIMD2<Float> { square.framePoint(unit) }

    /// Whether a box in 0...1 units of the square reaches within `margin` of a cut edge.
    func touchesCutEdge(low: SIMD2<Float>, high: SIMD2<Float>, margin: Float = 0.01) -> Bool {
        (cutEdges.left && low.x < margin) || (cutEdges.top && low.y < margin)
            || (cutEdges.right && high.x > 1 - margin) || (cutEdges.bottom && high.y > 1 - margin)
    }
}
