import Foundation
import VelvetGPU
import VelvetKernels
import VelvetNN

/// Which selfie-segmentation model to run.
public enum SegmentationModel: String, Sendable, CaseIterable {
    /// 256x256 input: the whole frame stretched.
    case square
    /// 256 wide x 144 high: cheaper (33 M MACs instead of 59 M) and less stretched on 16:9.
    case landscape
    /// `landscape` when the frame is at least 4:3 wide (width >= 1.33 x height), else `square`.
    case auto

    /// The model used for a `width` x `height` frame.
    public func resolved(width: Int, height: Int) -> SegmentationModel {
        guard self == .auto else { return self }
        return Float(width) >= 1.33 * Float(height) ? .landscape : .square
    }
}

/// MediaPipe's selfie segmentation on the GPU: the whole frame is stretched (no letterbox)
/// to the model's input, RGB in 0...1; the output is already a probability. It is copied
/// into a model-sized r32f image (`lowResolutionMask`), which its readers sample stretched
/// over the frame; `recordResize` makes a frame-sized copy (bilinear, pixel centres aligned,
/// as OpenCV's INTER_LINEAR).
public final class PersonSegmenter: @unchecked Sendable {
    public let model: SegmentationModel
    public let context: GPUContext
    /// The probability at the model's resolution (256x256 or 256x144), written by `record`.
    public let lowResolutionMask: GPUImage
    private let plan: NNModelPlan
    private let toTensor: NNImageToTensor
    private let fromTensor: TypedKernel<KernelLibrary.FaceMaskFromTensorPush>
    private let resample: TypedKernel<KernelLibrary.FaceMaskResamplePush>

    /// - Parameter model: `.square` or `.landscape` (resolve `.auto` first).
    public init(context: GPUContext, model: SegmentationModel, files: FaceModelFiles = .standard,
                kernels: NNKernels? = nil) throws {
        guard model != .auto else { throw FaceError.invalidArgument("resolve the segmentation model for the frame size first") }
        let kernels = kernels ?? NNKernels(context: context)
        let name: FaceModelName = model == .square ? .selfie : .selfieLandscape
        let (width, height) = model == .square ? (256, 256) : (256, 144)
        self.model = model
        self.context = context
        plan = try NNModelPlan(context: context, contentsOf: try files.url(name), kernels: kernels)
        guard plan.inputs.count == 1, plan.inputs[0].shape == [1, height, width, 3],
              plan.outputs.count == 1, plan.outputs[0].shape == [1, height, width, 1] else {
            throw FaceError.unexpectedModel(name: name.rawValue, reason: "input/output are not [1, \(height), \(width), 3|1]")
        }
        toTensor = try NNImageToTensor(context: context, kernels: kernels)
        fromTensor = try TypedKernel(context: context)
        resample = try TypedKernel(context: context)
        lowResolutionMask = try GPUImage(context: context, width: width, height: height, format: .r32f)
    }

    /// An image the size and format of `lowResolutionMask`, for a caller that keeps the masks
    /// of several frames.
    public func makeLowResolutionMask() throws -> GPUImage {
        try GPUImage(context: context, width: lowResolutionMask.width, height: lowResolutionMask.height, format: .r32f)
    }

    /// Records segmentation of `image` into `lowResolution` (by default `lowResolutionMask`;
    /// from `makeLowResolutionMask`).
    public func record(on recorder: CommandRecorder, image: GPUImage, into lowResolution: GPUImage? = nil) throws {
        let low = try checked(lowResolution)
        try recordInput(on: recorder, image: image)
        plan.record(on: recorder)
        recordOutput(on: recorder, lowResolution: low)
    }

    /// Adds segmentation of `image` to `batch`, into `lowResolution` as `record`.
    public func add(to batch: NNBatch, image: GPUImage, lowResolution: GPUImage? = nil) throws {
        let low = try checked(lowResolution)
        batch.add(plan, input: { try self.recordInput(on: $0, image: image) },
                  output: { self.recordOutput(on: $0, lowResolution: low) })
    }

    /// `lowResolution`, or `lowResolutionMask` when nil, once it is known to fit the model.
    private func checked(_ lowResolution: GPUImage?) throws -> GPUImage {
        let low = lowResolution ?? lowResolutionMask
        guard low.width == lowResolutionMask.width, low.height == lowResolutionMask.height, low.format == .r32f else {
            throw FaceError.invalidArgument("a person mask of \(model.rawValue) segmentation is r32f \(lowResolutionMask.width)x\(lowResolutionMask.height)")
        }
        return low
    }

    /// Records a model-sized probability `low` resized into `mask` (any size; r16f or r32f).
    public func recordResize(on recorder: CommandRecorder, from low: GPUImage, into mask: GPUImage) {
        let push = KernelLibrary.FaceMaskResamplePush(size: SIMD2(Int32(mask.width), Int32(mask.height)))
        recorder.dispatch(resample, [.sampledImage(low, .linear), .storageImage(mask)], push: push,
                          covering: mask.width, mask.height)
    }

    private func recordInput(on recorder: CommandRecorder, image: GPUImage) throws {
        let low = lowResolutionMask
        let transform = NNImageToTensor.Transform.region(x: 0, y: 0, width: Float(image.width), height: Float(image.height),
                                                         tensorWidth: low.width, tensorHeight: low.height).sampledAsMediaPipe
        try toTensor.record(on: recorder, image: image, transform: transform, into: plan.inputs[0], border: .replicate)
    }

    private func recordOutput(on recorder: CommandRecorder, lowResolution low: GPUImage) {
        let output = plan.outputs[0]
        let push = KernelLibrary.FaceMaskFromTensorPush(size: SIMD2(Int32(low.width), Int32(low.height)),
                                                        offset: Int32(output.byteOffset / 4))
        recorder.dispatch(fromTensor, [.buffer(output.buffer), .storageImage(low)], push: push, covering: low.width, low.height)
    }
}
