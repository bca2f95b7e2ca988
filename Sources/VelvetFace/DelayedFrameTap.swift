import VelvetGPU
import VelvetMedia

/// Lets the face tracker see every frame of a `VideoRenderer` run. An effect records its
/// work before the frame's command buffer is submitted, so the decoded frame is not on the
/// GPU yet when `record` is called; the tap copies it aside and hands it to `handler` at the
/// next call (the renderer waits for each frame's submission before starting the next) or
/// at `finish()`. The handler may submit GPU work of its own. The frames pass unchanged.
public final class DelayedFrameTap: FrameEffect, @unchecked Sendable {
    /// Called with the frame image, its index and its time in seconds.
    public typealias Handler = (GPUImage, Int, Double) throws -> Void

    private let handler: Handler
    private var copy: GPUImage?
    private var pending: (index: Int, time: Double)?

    public init(handler: @escaping Handler) {
        self.handler = handler
    }

    public func record(_ frame: EffectFrame, on recorder: CommandRecorder) throws -> FrameChange {
        try flush()
        if copy?.width != frame.input.width || copy?.height != frame.input.height {
            copy = try GPUImage(context: frame.input.context, width: frame.input.width, height: frame.input.height,
                                format: frame.input.format)
        }
        try recorder.copy(frame.input, to: copy!)
        pending = (frame.index, frame.time)
        return .none
    }

    /// Hands over the last frame; call once the render has returned.
    public func finish() throws {
        try flush()
    }

    private func flush() throws {
        guard let pending, let copy else { return }
        self.pending = nil
        try handler(copy, pending.index, pending.time)
    }
}
