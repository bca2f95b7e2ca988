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

/// What the renderer runs between decode and encode (the beauty pipeline). Kept as a
/// protocol so media I/O knows nothing of faces. Called only from the GPU thread.
public protocol FrameEffect: AnyObject, Sendable {
    /// Records the effects of one frame on `recorder`. Returns false when the frame is left
    /// unchanged (then `output` is ignored and the input passes through bit-exact).
    func record(_ frame: EffectFrame, on recorder: CommandRecorder) throws -> Bool
}
