import VelvetGPU
import VelvetNN

/// The person segmentation of one frame on its own, as the tracker runs it (the model chosen
/// by frame shape, the mask resized to frame size): for the path where the faces come from a
/// track file.
final class FrameSegmentation {
    let context: GPUContext
    private let files: FaceModelFiles
    private let kernels: NNKernels
    private let model: SegmentationModel
    private var segmenter: PersonSegmenter?
    private var mask: GPUImage?

    init(context: GPUContext, model: SegmentationModel = .auto, files: FaceModelFiles, kernels: NNKernels) {
        (self.context, self.model, self.files, self.kernels) = (context, model, files, kernels)
    }

    /// Loads the model a `width` x `height` frame takes, before the first `segment`.
    func prepare(width: Int, height: Int) throws {
        let resolved = model.resolved(width: width, height: height)
        if segmenter?.model != resolved { segmenter = try PersonSegmenter(context: context, model: resolved, files: files, kernels: kernels) }
    }

    /// The person probability of `image` at frame size (in `target` when given, an r16f image
    /// of the frame's size) and at the model's (images owned here, overwritten by the next
    /// call), with the GPU time it took (one submission, waited for).
    func segment(_ image: GPUImage, into target: GPUImage? = nil) throws -> (mask: GPUImage, lowResolution: GPUImage, timings: GPUTimings) {
        try prepare(width: image.width, height: image.height)
        if let target, target.width != image.width || target.height != image.height || target.format != .r16f {
            throw FaceError.invalidArgument("a person mask must be r16f of the frame's size")
        }
        if target == nil, mask?.width != image.width || mask?.height != image.height {
            mask = try GPUImage(context: context, width: image.width, height: image.height, format: .r16f)
        }
        let output = target ?? mask!
        let recorder = try CommandRecorder(context: context)
        recorder.beginSection("face.segment")
        try segmenter!.record(on: recorder, image: image, into: output)
        recorder.endSection()
        return (output, segmenter!.lowResolutionMask, try recorder.submit().wait())
    }
}
