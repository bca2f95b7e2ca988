/// A rectangle of the upright working image, in pixels.
public struct PixelRegion: Sendable, Equatable {
    public var x: Int, y: Int, width: Int, height: Int
    public init(x: Int, y: Int, width: Int, height: Int) { (self.x, self.y, self.width, self.height) = (x, y, width, height) }

    /// This region grown to cover `other` too.
    public func union(_ other: PixelRegion) -> PixelRegion {
        let left = min(x, other.x), top = min(y, other.y)
        return PixelRegion(x: left, y: top, width: max(x + width, other.x + other.width) - left,
                           height: max(y + height, other.y + other.height) - top)
    }

    func clamped(width limitX: Int, height limitY: Int) -> PixelRegion? {
        let left = max(x, 0), top = max(y, 0)
        let right = min(x + width, limitX), bottom = min(y + height, limitY)
        return right > left && bottom > top ? PixelRegion(x: left, y: top, width: right - left, height: bottom - top) : nil
    }
}
