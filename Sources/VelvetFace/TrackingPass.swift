import VelvetGPU
import VelvetMedia

/// A render effect that hands each frame's finished working image to `track` and changes
/// nothing: how a tracker follows a video decoded by `VideoRenderer` (analyze, tests).
public final class TrackingPass: FrameEffect, @unchecked Sendable {
    private let track: (GPUImage, Int, Double) throws -> Void

    /// `track(image, frameIndex, seconds)` runs on the renderer's GPU thread.
    public init(_ track: @escaping (GPUImage, Int, Double) throws -> Void) { self.track = track }

    public var minimumFrameSide: Int { FaceTracker.minimumFrameSide }

    public func record(_ frame: EffectFrame, on recorder: CommandRecorder) throws -> FrameChange {
        try track(frame.input, frame.index, frame.time)
        return .none
    }
}
