import Foundation
import VelvetGPU
import VelvetNN

/// BlazeFace on the GPU: the frame is letterboxed into the model's square input (border
/// -1 after mapping RGB to [-1, 1]) and the model runs; `DetectionMerge` decodes and merges
/// its outputs on the GPU. `record` and `decode` read the raw outputs back and decode them on
/// the CPU instead: the reference the GPU merge is tested against.
public final class FaceDetector: @unchecked Sendable {
    public let model: FaceDetectorModel
    private let plan: NNModelPlan
    private let toTensor: NNImageToTensor
    private let decoder: DetectionDecoder
    private let regressorIndex: Int
    private let logitIndex: Int
    /// The anchor centres as vec2s, for the GPU decoding.
    let anchorBuffer: GPUBuffer
    private var merge: DetectionMerge?

    var regressors: NNTensor { plan.outputs[regressorIndex] }
    var logits: NNTensor { plan.outputs[logitIndex] }
    var scoreThreshold: Float { decoder.scoreThreshold }

    /// - Parameter scoreThreshold: minimum detection confidence; nil: MediaPipe's own
    ///   (`model.defaultScoreThreshold`: 0.5 short range, 0.6 full range).
    public init(context: GPUContext, model: FaceDetectorModel, files: FaceModelFiles = .standard,
                kernels: NNKernels? = nil, scoreThreshold: Float? = nil) throws {
        let kernels = kernels ?? NNKernels(context: context)
        self.model = model
        plan = try NNModelPlan(context: context, contentsOf: try files.url(model.file), kernels: kernels)
        toTensor = try NNImageToTensor(context: context, kernels: kernels)
        decoder = DetectionDecoder(model: model, scoreThreshold: scoreThreshold ?? model.defaultScoreThreshold)
        let size = model.inputSize, anchors = model.anchorCount
        guard plan.inputs.count == 1, plan.inputs[0].shape == [1, size, size, 3] else {
            throw FaceError.unexpectedModel(name: model.file.rawValue, reason: "input is not [1, \(size), \(size), 3]")
        }
        guard let regressors = plan.outputs.firstIndex(where: { $0.shape == [1, anchors, 16] }),
              let logits = plan.outputs.firstIndex(where: { $0.shape == [1, anchors, 1] }) else {
            throw FaceError.unexpectedModel(name: model.file.rawValue, reason: "outputs are not [1, \(anchors), 16] and [1, \(anchors), 1]")
        }
        regressorIndex = regressors
        logitIndex = logits
        let centres = decoder.anchors.flatMap { [$0.x, $0.y] }
        anchorBuffer = try GPUBuffer(context: context, size: centres.count * 4)
        let recorder = try CommandRecorder(context: context)
        try centres.withUnsafeBytes { try recorder.upload($0, to: anchorBuffer) }
        try recorder.submit().wait()
    }

    /// Another instance of this detector (`NNModelPlan.twin`: its own buffers, the same
    /// launches and constants; the anchors shared), to run side by side with it.
    func twin() throws -> FaceDetector {
        try FaceDetector(twinOf: self)
    }

    private init(twinOf original: FaceDetector) throws {
        model = original.model
        plan = try original.plan.twin()
        toTensor = original.toTensor
        decoder = original.decoder
        regressorIndex = original.regressorIndex
        logitIndex = original.logitIndex
        anchorBuffer = original.anchorBuffer
    }

    /// Detections waiting for their submission to complete.
    public struct Pending: @unchecked Sendable {
        fileprivate let readbacks: [GPUReadback]
        fileprivate let view: DetectionView
    }

    /// Records the view's resampling into the model's input, inference and the readback of
    /// the raw outputs. The default view is MediaPipe's: the whole frame letterboxed.
    public func record(on recorder: CommandRecorder, image: GPUImage, view: DetectionView? = nil) throws -> Pending {
        let view = view ?? .letterbox(width: image.width, height: image.height)
        try recordInput(on: recorder, image: image, view: view)
        plan.record(on: recorder)
        let readbacks = try plan.readOutputs(on: recorder)
        return Pending(readbacks: readbacks, view: view)
    }

    /// Adds the view's resampling and inference to `batch`; `output` records what reads
    /// `regressors` and `logits` (before the next inference of this detector overwrites them).
    func add(to batch: NNBatch, image: GPUImage, view: DetectionView, output: @escaping (CommandRecorder) throws -> Void) {
        batch.add(plan, input: { try self.recordInput(on: $0, image: image, view: view) }, output: output)
    }

    private func recordInput(on recorder: CommandRecorder, image: GPUImage, view: DetectionView) throws {
        let border = model.letterboxBorder
        try toTensor.record(on: recorder, image: image, transform: view.square.tensorTransform(size: model.inputSize),
                            into: plan.inputs[0], scale: (2, 2, 2), offset: (-1, -1, -1), border: .constant(border, border, border))
    }

    /// The candidates of completed readbacks in frame pixels, before suppression (to be
    /// merged with other views' by `DetectionCandidate.suppress`).
    func candidates(_ pending: Pending) -> [DetectionCandidate] {
        let regressors = pending.readbacks[regressorIndex].raw, logits = pending.readbacks[logitIndex].raw
        return regressors.withMemoryRebound(to: Float.self) { r in
            logits.withMemoryRebound(to: Float.self) { l in
                decoder.candidates(regressors: r, logits: l, view: pending.view)
            }
        }
    }

    /// Decodes completed readbacks on the CPU: detections sorted by score, best first.
    public func decode(_ pending: Pending) -> [FaceDetection] {
        DetectionCandidate.suppress(candidates(pending))
    }

    /// Detects faces in `image` as the tracker does, decoded and merged on the GPU (one
    /// submission, waited for). The default view is MediaPipe's: the whole frame letterboxed.
    public func detect(_ image: GPUImage, views: [DetectionView]? = nil) throws -> [FaceDetection] {
        let merge = try self.merge ?? DetectionMerge(context: plan.context)
        self.merge = merge
        let views = views ?? [.letterbox(width: image.width, height: image.height)]
        let recorder = try CommandRecorder(context: plan.context)
        let pending = try merge.record(views.map { (self, $0) }, of: image, on: recorder)
        try recorder.submit().wait()
        return pending.detections(model)
    }
}
