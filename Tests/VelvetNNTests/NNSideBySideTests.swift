import Foundation
import VelvetGPU
import VelvetTestSupport
import XCTest
@testable import VelvetNN

/// `NNModelPlan.recordSideBySide`: the models a tracker frame runs, recorded with their levels
/// side by side, give exactly the outputs of recording them one after another (a level left
/// out, or one run before the level it reads, changes them; a missing barrier is a
/// synchronization-validation message, which fails the test).
final class NNSideBySideTests: GPUTestCase {
    func testSideBySideGivesTheOutputsOfOneAfterAnother() throws {
        let names = ["face_detection_short_range", "face_detection_full_range_sparse", "face_landmark",
                     "selfie_segmentation_landscape"]
        let kernels = NNKernels(context: try context)
        for tuning in [NNTuning.gpu, .cpu] {
            let plans = try names.map { name in
                try NNModelPlan(context: context, graph: try NNGraph(contentsOf: try ModelFixtures.url(name)), kernels: kernels,
                                options: .init(tuning: tuning))
            }
            func outputs(sideBySide: Bool) throws -> [[UInt8]] {
                let recorder = try CommandRecorder(context: context)
                for (name, plan) in zip(names, plans) {
                    let input = NNTestInputs.inputs(for: name, shape: plan.inputs[0].shape)[1].values
                    try plan.writeInput(input, on: recorder)
                }
                if sideBySide {
                    NNModelPlan.recordSideBySide(plans, on: recorder)
                } else {
                    plans.forEach { $0.record(on: recorder) }
                }
                let readbacks = try plans.flatMap { try $0.readOutputs(on: recorder) }
                try recorder.submit().wait()
                return readbacks.map { Array($0.raw) }
            }
            let expected = try outputs(sideBySide: false)
            // Nothing left over from the run before: every output is rewritten.
            for plan in plans { try plan.run([[Float](repeating: 0, count: plan.inputs[0].elementCount)]) }
            let together = try outputs(sideBySide: true)
            XCTAssertEqual(together.count, expected.count)
            for (index, (a, b)) in zip(together, expected).enumerated() {
                XCTAssertTrue(a == b, "\(tuning == .gpu ? "GPU" : "CPU") tuning, output \(index): side by side differs from one after another")
            }
        }
    }

    /// A batch holding one plan twice (two faces' meshes) with another plan: the second mesh
    /// waits for the first one's outputs, and each inference gives what it gives alone.
    func testABatchRunsOnePlanTwiceInTurn() throws {
        let (mesh, mask) = try meshAndMask()
        let meshInputs = NNTestInputs.inputs(for: "face_landmark", shape: mesh.inputs[0].shape).map(\.values)
        let maskInput = NNTestInputs.inputs(for: "selfie_segmentation_landscape", shape: mask.inputs[0].shape)[0].values
        let alone = try meshInputs.map { try mesh.run([$0]) } + [try mask.run([maskInput])]

        let batch = NNBatch()
        let recorder = try CommandRecorder(context: context)
        var readbacks: [[GPUReadback]] = [[], [], []]
        for (index, input) in meshInputs.enumerated() {
            batch.add(mesh, input: { try mesh.writeInput(input, on: $0) }, output: { readbacks[index] = try mesh.readOutputs(on: $0) })
        }
        batch.add(mask, input: { try mask.writeInput(maskInput, on: $0) }, output: { readbacks[2] = try mask.readOutputs(on: $0) })
        try batch.record(on: recorder)
        XCTAssertTrue(batch.isEmpty)
        try recorder.submit().wait()
        let plans = [mesh, mesh, mask]
        for (index, (plan, expected)) in zip(plans, alone).enumerated() {
            let got = zip(readbacks[index], plan.outputs).map { Array(NNModelPlan.floats($0).prefix($1.elementCount)) }
            XCTAssertTrue(got == expected, "inference \(index) of the batch differs from the same inference alone")
        }
    }

    /// A twin (`NNModelPlan.twin`: own buffers, shared launches and constants) runs side by
    /// side with its original, each giving what the original gives alone on its input.
    func testATwinRunsSideBySideWithItsOriginal() throws {
        let name = "face_detection_full_range_sparse"
        let plan = try NNModelPlan(context: context, graph: try NNGraph(contentsOf: try ModelFixtures.url(name)),
                                   kernels: NNKernels(context: try context), options: .init(tuning: .gpu))
        let twin = try plan.twin()
        XCTAssertEqual(twin.launchCount, plan.launchCount)
        XCTAssertEqual(twin.levelCount, plan.levelCount)
        let inputs = NNTestInputs.inputs(for: name, shape: plan.inputs[0].shape).map(\.values)
        let alone = try inputs.map { try plan.run([$0]) }

        let batch = NNBatch()
        let recorder = try CommandRecorder(context: context)
        var readbacks: [[GPUReadback]] = [[], []]
        for (index, (instance, input)) in zip([plan, twin], inputs).enumerated() {
            batch.add(instance, input: { try instance.writeInput(input, on: $0) },
                      output: { readbacks[index] = try instance.readOutputs(on: $0) })
        }
        try batch.record(on: recorder)
        try recorder.submit().wait()
        for (index, instance) in [plan, twin].enumerated() {
            let got = zip(readbacks[index], instance.outputs).map { Array(NNModelPlan.floats($0).prefix($1.elementCount)) }
            XCTAssertTrue(got == alone[index], "instance \(index) side by side differs from the plan alone")
        }
    }

    /// A batch replayed from `NNRecordedGroups` (each group recorded once into a secondary
    /// command buffer) gives, frame after frame and input after input, what each inference
    /// gives alone; the groups are recorded on the first frame only. The inputs are uploaded
    /// in the frame's own recording just before the replay, so a replay not ordered behind
    /// them reads stale inputs (and is a synchronization-validation message).
    func testAReplayedBatchGivesWhatEachInferenceGivesAlone() throws {
        let (mesh, mask) = try meshAndMask()
        let meshInputs = NNTestInputs.inputs(for: "face_landmark", shape: mesh.inputs[0].shape).map(\.values)
        let maskInputs = NNTestInputs.inputs(for: "selfie_segmentation_landscape", shape: mask.inputs[0].shape).map(\.values)
        let recordings = NNRecordedGroups()
        for frame in 0..<3 {
            let meshInput = meshInputs[frame % meshInputs.count], maskInput = maskInputs[frame % maskInputs.count]
            let alone = [try mesh.run([meshInput]), try mask.run([maskInput])]
            let batch = NNBatch()
            let recorder = try CommandRecorder(context: context)
            var readbacks: [[GPUReadback]] = [[], []]
            batch.add(mesh, input: { try mesh.writeInput(meshInput, on: $0) }, output: { readbacks[0] = try mesh.readOutputs(on: $0) })
            batch.add(mask, input: { try mask.writeInput(maskInput, on: $0) }, output: { readbacks[1] = try mask.readOutputs(on: $0) })
            try batch.record(on: recorder, recordings: recordings)
            try recorder.submit().wait()
            XCTAssertEqual(recordings.count, 1, "frame \(frame): one group, recorded once")
            for (index, plan) in [mesh, mask].enumerated() {
                let got = zip(readbacks[index], plan.outputs).map { Array(NNModelPlan.floats($0).prefix($1.elementCount)) }
                XCTAssertTrue(got == alone[index], "frame \(frame), inference \(index): replayed differs from alone")
            }
        }
    }

    /// The mesh and the landscape person mask, planned for GPUs, sharing their kernels.
    private func meshAndMask() throws -> (mesh: NNModelPlan, mask: NNModelPlan) {
        let kernels = NNKernels(context: try context)
        func plan(_ name: String) throws -> NNModelPlan {
            try NNModelPlan(context: context, graph: try NNGraph(contentsOf: try ModelFixtures.url(name)), kernels: kernels,
                            options: .init(tuning: .gpu))
        }
        return (try plan("face_landmark"), try plan("selfie_segmentation_landscape"))
    }
}
