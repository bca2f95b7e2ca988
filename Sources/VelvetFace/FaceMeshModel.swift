import Foundation
import VelvetGPU
import VelvetNN

/// The 468-point face mesh on the GPU: a rotated square ROI is cropped to 192x192
/// (bilinear, replicated border, RGB in 0...1), the model runs, and the 1404 coordinates
/// plus the presence logit come back to the CPU, where they are mapped to frame pixels.
public final class FaceMeshModel: @unchecked Sendable {
    public static let inputSize = 192
    public static let pointCount = 468

    private let plan: NNModelPlan
    private let toTensor: NNImageToTensor
    private let landmarkIndex: Int
    private let presenceIndex: Int

    public init(context: GPUContext, files: FaceModelFiles = .standard, kernels: NNKernels? = nil) throws {
        let kernels = kernels ?? NNKernels(context: context)
        let name = FaceModelName.mesh.rawValue
        plan = try NNModelPlan(context: context, contentsOf: try files.url(.mesh), kernels: kernels)
        toTensor = try NNImageToTensor(context: context, kernels: kernels)
        let size = Self.inputSize
        guard plan.inputs.count == 1, plan.inputs[0].shape == [1, size, size, 3] else {
            throw FaceError.unexpectedModel(name: name, reason: "input is not [1, \(size), \(size), 3]")
        }
        guard let landmarks = plan.outputs.firstIndex(where: { $0.elementCount == Self.pointCount * 3 }),
              let presence = plan.outputs.firstIndex(where: { $0.elementCount == 1 }) else {
            throw FaceError.unexpectedModel(name: name, reason: "outputs are not 1404 coordinates and 1 presence logit")
        }
        landmarkIndex = landmarks
        presenceIndex = presence
    }

    /// Another instance of the model (`NNModelPlan.twin`: its own buffers, the same launches
    /// and weights), so that several faces' meshes run side by side.
    public func twin() throws -> FaceMeshModel { try FaceMeshModel(twinOf: self) }

    private init(twinOf original: FaceMeshModel) throws {
        plan = try original.plan.twin()
        toTensor = original.toTensor
        landmarkIndex = original.landmarkIndex
        presenceIndex = original.presenceIndex
    }

    /// A mesh waiting for its submission to complete.
    public struct Pending: @unchecked Sendable {
        public let roi: FaceROI
        fileprivate let landmarks: GPUReadback
        fileprivate let presence: GPUReadback
    }

    /// Records crop, inference and readback for one ROI. Several ROIs can share a recorder:
    /// each readback is taken before the next crop overwrites the model's buffers.
    public func record(on recorder: CommandRecorder, image: GPUImage, roi: FaceROI) throws -> Pending {
        try recordInput(on: recorder, image: image, roi: roi)
        plan.record(on: recorder)
        return try recordOutput(on: recorder, roi: roi)
    }

    /// Adds one ROI's crop, inference and readback to `batch`; `done` gets the pending mesh
    /// when the batch is recorded.
    public func add(to batch: NNBatch, image: GPUImage, roi: FaceROI, done: @escaping (Pending) -> Void) {
        batch.add(plan, input: { try self.recordInput(on: $0, image: image, roi: roi) },
                  output: { done(try self.recordOutput(on: $0, roi: roi)) })
    }

    private func recordInput(on recorder: CommandRecorder, image: GPUImage, roi: FaceROI) throws {
        try toTensor.record(on: recorder, image: image, transform: roi.tensorTransform(size: Self.inputSize),
                            into: plan.inputs[0], border: .replicate)
    }

    private func recordOutput(on recorder: CommandRecorder, roi: FaceROI) throws -> Pending {
        let readbacks = try plan.readOutputs(on: recorder)
        return Pending(roi: roi, landmarks: readbacks[landmarkIndex], presence: readbacks[presenceIndex])
    }

    /// The mesh in frame pixels (z scaled like x) and the presence probability.
    public func decode(_ pending: Pending) -> (landmarks: [SIMD3<Float>], presence: Float) {
        let roi = pending.roi
        let (c, s) = (cosf(roi.rotation), sinf(roi.rotation))
        let size = Float(Self.inputSize)
        let raw = pending.landmarks.raw
        var points: [SIMD3<Float>] = []
        points.reserveCapacity(Self.pointCount)
        for index in 0..<Self.pointCount {
            let x = raw.loadUnaligned(fromByteOffset: index * 12, as: Float.self) / size - 0.5
            let y = raw.loadUnaligned(fromByteOffset: index * 12 + 4, as: Float.self) / size - 0.5
            let z = raw.loadUnaligned(fromByteOffset: index * 12 + 8, as: Float.self) / size
            points.append(SIMD3(roi.centre.x + (c * x - s * y) * roi.side,
                                roi.centre.y + (s * x + c * y) * roi.side,
                                z * roi.side))
        }
        let logit = pending.presence.raw.loadUnaligned(as: Float.self)
        return (points, 1 / (1 + expf(-logit)))
    }
}
