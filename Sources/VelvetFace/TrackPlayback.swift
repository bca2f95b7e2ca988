import VelvetGPU
import VelvetNN

/// Plays a track file back in place of the face tracker (`render --tracks`): each frame's
/// faces come from the file, and the person segmentation, which the file holds only as a
/// statistic, runs as the tracker runs it (every frame, the model chosen by frame shape, the
/// probability at the model's size), so a render from the file equals one from the tracker.
public final class TrackPlayback: @unchecked Sendable {
    public let file: TrackFile
    public let context: GPUContext
    /// The one input frame a still output from a video takes (`--frame`); nil when the
    /// render takes every frame (then the file must have as many as the input).
    public let stillFrame: Int?
    private let segmentation: FrameSegmentation
    /// Frames played so far.
    public private(set) var framesPlayed = 0
    public private(set) var lastTimings = GPUTimings()

    /// Fails when the render took every frame and the file has more than it played.
    public func checkEveryFramePlayed(path: String) throws {
        guard stillFrame == nil, framesPlayed != file.frames.count else { return }
        throw TrackFileError(path, "the track file has \(file.frames.count) frame(s) and the input \(framesPlayed)")
    }

    public init(file: TrackFile, context: GPUContext, stillFrame: Int? = nil, files: FaceModelFiles = .standard) {
        self.file = file
        self.context = context
        self.stillFrame = stillFrame
        segmentation = FrameSegmentation(context: context, files: files, kernels: NNKernels(context: context))
    }

    /// An image for `process(personMask:)`, for `width` x `height` frames.
    public func makePersonMask(width: Int, height: Int) throws -> GPUImage {
        try segmentation.makeMask(width: width, height: height)
    }

    /// The faces of rendered frame `index` with the frame's person mask (in `personMask` when
    /// given, from `makePersonMask`; else in an image owned here, overwritten by the next
    /// call), as `FaceTracker.process` returns them.
    public func process(_ image: GPUImage, index: Int, path: String, personMask: GPUImage? = nil) throws -> FaceTrackerResult {
        let position = (stillFrame ?? 0) + index
        guard position < file.frames.count else {
            throw TrackFileError(path, "the track file has \(file.frames.count) frame(s) and the input has more")
        }
        guard image.width == file.width, image.height == file.height else {
            throw TrackFileError(path, "the track file is for \(file.width)x\(file.height) frames and the input's are "
                                 + "\(image.width)x\(image.height)")
        }
        let (mask, timings) = try segmentation.segment(image, into: personMask)
        lastTimings = timings
        framesPlayed += 1
        return FaceTrackerResult(faces: file.frames[position].faces, personMask: mask, ranDetection: false)
    }
}
