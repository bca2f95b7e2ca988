import VelvetGPU

/// One frame handed to the effects, on the GPU thread.
public struct EffectFrame {
    /// 0-based position in the input.
    public let index: Int
    /// Presentation time in seconds.
    public let time: Double
    /// The upright working image as decoded (rgba16f, R'G'B' full range). Do not write it.
    public let input: GPUImage
    /// Where the effects write their result (same size and format).
    public let output: GPUImage
}

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

/// What the effects changed in a frame. Unchanged pixels are never converted back: the
/// decoded planes go to the encoder as they are (bit-exact, and no GPU work).
public enum FrameChange: Sendable, Equatable {
    case none
    /// Only this region of `output` differs from the input (the rest of `output` is undefined).
    case region(PixelRegion)
    case whole
}

/// What the renderer runs between decode and encode (the beauty pipeline). Kept as a
/// protocol so media I/O knows nothing of faces. Called only from the GPU thread.
public protocol FrameEffect: AnyObject, Sendable {
    /// Records the effects of one frame on `recorder` and says what they changed.
    func record(_ frame: EffectFrame, on recorder: CommandRecorder) throws -> FrameChange
}
