import VelvetGPU
import VelvetNN

/// The person segmentation of one frame on its own, as the tracker runs it (the model chosen
/// by frame shape, the probability at the model's size): for the path where the faces come
/// from a track file.
final class FrameSegmentation {
    let context: GPUContext
    private let files: FaceModelFiles
    private let kernels: NNKernels
    private let model: SegmentationModel
    private var segmenter: PersonSegmenter?

    init(context: GPUContext, model: SegmentationModel = .auto, files: FaceModelFiles, kernels: NNKernels) {
        (self.context, self.model, self.files, self.kernels) = (context, model, files, kernels)
    }

    /// Loads the model a `width` x `height` frame takes, before the first `segment`.
    func prepare(width: Int, height: Int) throws {
        let resolved = model.resolved(width: width, height: height)
        if segmenter?.model != resolved { segmenter = try PersonSegmenter(context: context, model: resolved, files: files, kernels: kernels) }
    }

    /// An image for `segment(_:into:)`, for `width` x `height` frames.
    func makeMask(width: Int, height: Int) throws -> GPUImage {
        try prepare(width: width, height: height)
        return try segmenter!.makeLowResolutionMask()
    }

    /// The person probability of `image` at the model's size (in `target` when given, from
    /// `makeMask`; else in an image owned here, overwritten by the next call), with the GPU
    /// time it took (one submission, waited for).
    func segment(_ image: GPUImage, into target: GPUImage? = nil) throws -> (mask: GPUImage, timings: GPUTimings) {
        try prepare(width: image.width, height: image.height)
        let recorder = try CommandRecorder(context: context)
        recorder.beginSection("face.segment")
        try segmenter!.record(on: recorder, image: image, into: target)
        recorder.endSection()
        return (target ?? segmenter!.lowResolutionMask, try recorder.submit().wait())
    }
}
