import Foundation
import VelvetGPU
import VelvetTestSupport
import XCTest
@testable import VelvetNN

/// Whole models on the GPU against the double-precision CPU reference (every output
/// element) and against LiteRT's sampled outputs (NNLiteRTGoldens).
///
/// Tolerance: the GPU accumulates in float32 in a different order than LiteRT or the
/// reference, so each output carries a few float32 roundings per layer through ~30-60
/// layers; outputs are in model units (detector boxes in 128/192-px, landmarks in
/// 192-px, scores as logits, masks as probabilities). 1e-3 absolute (the bound:
/// 0.05 px at 192 px is 2.6e-4 of the range) plus 2e-5 relative for the largest values.
final class NNModelTests: GPUTestCase {
    nonisolated(unsafe) static var sharedKernels: NNKernels?

    func kernels() throws -> NNKernels {
        let context = try context
        if let kernels = Self.sharedKernels, kernels.context === context { return kernels }
        let kernels = NNKernels(context: context)
        Self.sharedKernels = kernels
        return kernels
    }

    static func tolerance(_ reference: Double) -> Double { 1e-3 + 2e-5 * abs(reference) }

    func testShortRangeDetector() throws { try checkModel("face_detection_short_range") }
    func testFullRangeDetector() throws { try checkModel("face_detection_full_range_sparse") }
    func testFaceMesh() throws { try checkModel("face_landmark") }
    func testSelfieSegmentation() throws { try checkModel("selfie_segmentation") }
    func testSelfieSegmentationLandscape() throws { try checkModel("selfie_segmentation_landscape") }

    /// lavapipe's tuning reads through texel buffers (nn_tensor_reads.glsl) with each
    /// convolution's epilogue fixed at compile time (nn_epilogue_kind.glsl); reading the same
    /// tensors through storage buffers, the epilogue read from the push block, must give the
    /// same bytes, output for output, in every model (their activations and residuals as is,
    /// padded, pooled and resized; the segmentation's transposed convolution, elementwise ops
    /// and squeeze-excite heads, which have texel kernels of their own).
    func testTexelReadsGiveWhatStorageBufferReadsGive() throws {
        for name in ["face_landmark", "selfie_segmentation_landscape", "selfie_segmentation", "face_detection_short_range",
                     "face_detection_full_range_sparse"] {
            let graph = try NNGraph(contentsOf: try ModelFixtures.url(name))
            var storageReads = NNTuning.cpu
            storageReads.texelReads = false
            XCTAssertTrue(NNTuning.cpu.texelReads)
            let shape = graph.tensors[graph.inputs[0]].shape
            let (_, input) = try XCTUnwrap(NNTestInputs.inputs(for: name, shape: shape).first)
            let outputs = try [NNTuning.cpu, storageReads].map {
                try NNModelPlan(context: context, graph: graph, kernels: kernels(), options: .init(tuning: $0)).run([input])
            }
            XCTAssertEqual(outputs[0].count, outputs[1].count)
            for (index, (texel, storage)) in zip(outputs[0], outputs[1]).enumerated() {
                XCTAssertEqual(texel.map(\.bitPattern), storage.map(\.bitPattern), "\(name) output \(index)")
            }
        }
    }

    /// Every tuning runs: the GPU's (the launches a real GPU records), the GPU's with block
    /// pairs, and lavapipe's.
    private func checkModel(_ name: String) throws {
        let graph = try NNGraph(contentsOf: try ModelFixtures.url(name))
        let plans = try [NNTuning.gpu, .withBlockPairs, .cpu].map {
            try NNModelPlan(context: context, graph: graph, kernels: kernels(), options: .init(tuning: $0))
        }
        let shape = graph.tensors[graph.inputs[0]].shape
        for (inputName, input) in NNTestInputs.inputs(for: name, shape: shape) {
            let reference = try NNReference(graph: graph).run([input])
            for plan in plans {
                let tuning = plan.tuning == .gpu ? "GPU" : plan.tuning == .cpu ? "CPU" : "GPU + block pairs"
                let label = "\(name) (\(tuning) tuning) \(inputName)"
                let gpu = try plan.run([input])
                XCTAssertEqual(gpu.count, reference.count)
                for (index, (ours, expected)) in zip(gpu, reference).enumerated() {
                    XCTAssertEqual(ours.count, expected.count, "\(label) output \(index)")
                    var worst = 0.0, worstAt = 0
                    for (i, (a, b)) in zip(ours, expected).enumerated() {
                        let excess = abs(Double(a) - b) - Self.tolerance(b)
                        if excess > worst || !a.isFinite { (worst, worstAt) = (a.isFinite ? excess : .infinity, i) }
                    }
                    XCTAssertLessThanOrEqual(worst, 0, "\(label) output \(index): element \(worstAt) is \(ours[worstAt]), reference \(expected[worstAt])")
                    let golden = try XCTUnwrap(NNLiteRTGoldens.entry(model: name, input: inputName, output: index))
                    XCTAssertLessThanOrEqual(golden.maxSampleError(ours), 1e-3, "\(label) output \(index) vs LiteRT")
                }
            }
        }
    }
}
