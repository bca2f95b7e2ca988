/// A rectangle of an image, in pixels (top-left origin).
public struct PixelRegion: Sendable, Equatable {
    public var isEmpty: Bool { width <= 0 || height <= 0 }

    public var x: Int, y: Int, width: Int, height: Int
    public init(x: Int, y: Int, width: Int, height: Int) { (self.x, self.y, self.width, self.height) = (x, y, width, height) }

    /// Whether the pixel at column `x`, row `y` lies inside.
    public func contains(x px: Int, y py: Int) -> Bool { px >= x && px < x + width && py >= y && py < y + height }

    /// This region grown to cover `other` too.
    public func union(_ other: PixelRegion) -> PixelRegion {
        let left = min(x, other.x), top = min(y, other.y)
        return PixelRegion(x: left, y: top, width: max(x + width, other.x + other.width) - left,
                           height: max(y + height, other.y + other.height) - top)
    }

    /// The part inside a `limitX` x `limitY` frame, or nil when none is.
    public func clamped(width limitX: Int, height limitY: Int) -> PixelRegion? {
        let left = max(x, 0), top = max(y, 0)
        let right = min(x + width, limitX), bottom = min(y + height, limitY)
        return right > left && bottom > top ? PixelRegion(x: left, y: top, width: right - left, height: bottom - top) : nil
    }
}
