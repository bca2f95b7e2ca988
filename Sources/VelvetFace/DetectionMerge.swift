import Foundation
import VelvetGPU
import VelvetNN
import VelvetKernels

/// A detection pass decoded and merged on the GPU: every view's raw outputs are decoded
/// against the anchors into one candidate list per model (frame pixels; above the score
/// threshold; less those a tile edge cuts), and one weighted NMS per model merges the list
/// (`face_detection_decode.comp`, `face_detection_suppress.comp`; `DetectionDecoder` and
/// `DetectionCandidate.suppress` are the CPU reference). Only the merged detections come back:
/// a few KB, where a tiled still's raw outputs are megabytes.
final class DetectionMerge {
    /// Floats per candidate and per detection (face_detection_common.glsl).
    static let recordFloats = 17
    static let headerBytes = 16
    /// Detections read back per model and pass (the suppression kernel's MAX_KEPT); more
    /// are counted, not kept: the tracker keeps at most 64 faces.
    static let maximumDetections = 256

    private let context: GPUContext
    private let decode: TypedKernel<KernelLibrary.FaceDetectionDecodePush>
    private let suppress: TypedKernel<KernelLibrary.FaceDetectionSuppressPush>

    init(context: GPUContext) throws {
        self.context = context
        decode = try TypedKernel(context: context)
        suppress = try TypedKernel(context: context)
    }

    /// The views of one model in one pass, appended to one list.
    struct CandidateList {
        let buffer: GPUBuffer
        let capacity: Int
    }

    /// The merged detections of a pass, per model, once its submission completed.
    struct Pending: @unchecked Sendable {
        fileprivate let readbacks: [FaceDetectorModel: GPUReadback]

        /// Best first, as `DetectionCandidate.suppress` returns them.
        func detections(_ model: FaceDetectorModel) -> [FaceDetection] {
            guard let raw = readbacks[model]?.raw else { return [] }
            func float(_ index: Int) -> Float { raw.loadUnaligned(fromByteOffset: headerBytes + index * 4, as: Float.self) }
            let count = min(Int(raw.loadUnaligned(fromByteOffset: 0, as: UInt32.self)), maximumDetections)
            return (0..<count).map { slot in
                let base = slot * recordFloats
                let low = SIMD2(float(base + 1), float(base + 2)), high = SIMD2(float(base + 3), float(base + 4))
                let keypoints = (0..<6).map { SIMD2(float(base + 5 + 2 * $0), float(base + 6 + 2 * $0)) }
                return FaceDetection(score: float(base), box: FaceBox(x: low.x, y: low.y, width: high.x - low.x, height: high.y - low.y),
                                     keypoints: keypoints)
            }
        }
    }

    /// Records inference and decoding of every (detector, view) run, then one suppression
    /// per model; read the result with `Pending.detections` after the submission completed.
    func record(_ runs: [(FaceDetector, DetectionView)], of image: GPUImage, on recorder: CommandRecorder) throws -> Pending {
        let batch = NNBatch()
        let lists = try add(runs, of: image, to: batch, on: recorder)
        try batch.record(on: recorder)
        return try finish(lists, on: recorder)
    }

    /// The candidate lists of views added to a batch, to `finish` once it is recorded.
    struct Lists {
        fileprivate let byModel: [FaceDetectorModel: CandidateList]
    }

    /// Records the candidate lists' headers, and adds each view's inference and decoding to
    /// `batch` (so the detectors can run side by side with each other and with other models).
    func add(_ runs: [(FaceDetector, DetectionView)], of image: GPUImage, to batch: NNBatch,
             on recorder: CommandRecorder) throws -> Lists {
        var lists: [FaceDetectorModel: CandidateList] = [:]
        for (model, count) in Dictionary(grouping: runs, by: { $0.0.model }).mapValues(\.count) {
            // Room for every anchor of every view: the list cannot overflow.
            let capacity = model.anchorCount * count
            let buffer = try GPUBuffer.pooled(context: context, size: Self.headerBytes + capacity * Self.recordFloats * 4)
            try [UInt32(0), UInt32(capacity), 0, 0].withUnsafeBytes { try recorder.upload($0, to: buffer) }
            lists[model] = CandidateList(buffer: buffer, capacity: capacity)
        }
        for (detector, view) in runs {
            let list = lists[detector.model]!
            detector.add(to: batch, image: image, view: view) { self.recordDecode(detector, view: view, into: list, on: $0) }
        }
        return Lists(byModel: lists)
    }

    /// Records each model's suppression over its views' candidates (after the batch `add`
    /// filled was recorded).
    func finish(_ lists: Lists, on recorder: CommandRecorder) throws -> Pending {
        var readbacks: [FaceDetectorModel: GPUReadback] = [:]
        for (model, list) in lists.byModel {
            readbacks[model] = try recordSuppression(list, on: recorder)
        }
        return Pending(readbacks: readbacks)
    }

    /// The suppression kernel on given candidates (one submission, waited for): what a pass
    /// does after decoding, for tests against `DetectionCandidate.suppress`.
    func suppress(_ candidates: [DetectionCandidate]) throws -> [FaceDetection] {
        let capacity = max(1, candidates.count)
        let buffer = try GPUBuffer.pooled(context: context, size: Self.headerBytes + capacity * Self.recordFloats * 4)
        let records = candidates.flatMap { c in [c.score, c.low.x, c.low.y, c.high.x, c.high.y] + c.keypoints.flatMap { [$0.x, $0.y] } }
        let recorder = try CommandRecorder(context: context)
        try [UInt32(candidates.count), UInt32(capacity), 0, 0].withUnsafeBytes { try recorder.upload($0, to: buffer) }
        if !records.isEmpty { try records.withUnsafeBytes { try recorder.upload($0, to: buffer, offset: Self.headerBytes) } }
        let readback = try recordSuppression(CandidateList(buffer: buffer, capacity: capacity), on: recorder)
        try recorder.submit().wait()
        return Pending(readbacks: [.fullRange: readback]).detections(.fullRange)
    }

    private func recordDecode(_ detector: FaceDetector, view: DetectionView, into list: CandidateList, on recorder: CommandRecorder) {
        let square = view.square
        let (c, s) = (cosf(square.rotation), sinf(square.rotation))
        let cut = view.cutEdges
        let push = KernelLibrary.FaceDetectionDecodePush(
            centre: SIMD2(square.centre.x, square.centre.y), axisX: SIMD2(c * square.side, s * square.side),
            axisY: SIMD2(-s * square.side, c * square.side), anchorCount: UInt32(detector.model.anchorCount),
            regressorBase: UInt32(detector.regressors.byteOffset / 4), logitBase: UInt32(detector.logits.byteOffset / 4),
            inputSize: Float(detector.model.inputSize), scoreThreshold: detector.scoreThreshold,
            cutEdges: (cut.left ? 1 : 0) | (cut.top ? 2 : 0) | (cut.right ? 4 : 0) | (cut.bottom ? 8 : 0))
        recorder.dispatch(decode, [.buffer(detector.regressors.buffer), .buffer(detector.logits.buffer),
                                   .buffer(detector.anchorBuffer), .buffer(list.buffer)],
                          push: push, covering: detector.model.anchorCount, 1)
    }

    private func recordSuppression(_ list: CandidateList, on recorder: CommandRecorder) throws -> GPUReadback {
        let work = try GPUBuffer.pooled(context: context, size: 2 * list.capacity * 4)
        let output = try GPUBuffer.pooled(context: context, size: Self.headerBytes + Self.maximumDetections * Self.recordFloats * 4)
        try [UInt32(0), UInt32(Self.maximumDetections), 0, 0].withUnsafeBytes { try recorder.upload($0, to: output) }
        let push = KernelLibrary.FaceDetectionSuppressPush(overlapThreshold: DetectionCandidate.overlapThreshold)
        recorder.dispatch(suppress, [.buffer(list.buffer), .buffer(work), .buffer(output)], push: push, groups: (1, 1, 1))
        return try recorder.download(output)
    }
}
