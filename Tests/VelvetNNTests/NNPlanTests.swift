import Foundation
import VelvetGPU
import VelvetTestSupport
import XCTest
@testable import VelvetNN

/// Planning and execution behaviour: fusion, memory reuse, errors, image input, and
/// recording next to other GPU work.
final class NNPlanTests: GPUTestCase {
    func testFusionChangesNothingButTheLaunchCount() throws {
        let graph = try NNGraph(contentsOf: try ModelFixtures.url("face_detection_full_range_sparse"))
        let kernels = NNKernels(context: try context)
        let fused = try NNModelPlan(context: context, graph: graph, kernels: kernels, options: .init(tuning: .gpu))
        let unfused = try NNModelPlan(context: context, graph: graph, kernels: kernels, options: .init(fuse: false))
        XCTAssertLessThan(fused.launchCount, unfused.launchCount * 2 / 3, "fusion should remove PADs, ADDs and activations")
        let input = NNTestInputs.random(count: 192 * 192 * 3, seed: 3, range: -1...1)
        let a = try fused.run([input]), b = try unfused.run([input])
        // Fused kernels may add a convolution's terms in another order (a split sum), so
        // the outputs agree to float32 rounding of their magnitude.
        for (x, y) in zip(a, b) {
            let difference = zip(x, y).map { abs($0 - $1) }.max() ?? 0
            let magnitude = max(y.map(abs).max() ?? 0, 1)
            XCTAssertLessThanOrEqual(difference, 4e-6 * magnitude, "largest output \(magnitude)")
        }
    }

    /// Every pass in the planner's list changes the plan of at least one of the five models
    /// (all fusions on, with the GPU tuning or lavapipe's limits): a pass that no longer
    /// claims anything, or is shadowed by one before it, fails here.
    func testEveryFusionPassChangesSomeModelsPlan() throws {
        let graphs = try ModelFixtures.names.map { try NNGraph(contentsOf: try ModelFixtures.url($0)) }
        var lavapipeLimits = NNTuning.cpu
        lavapipeLimits.fuseDepthwisePointwise = true
        lavapipeLimits.fuseBlockPairs = true
        lavapipeLimits.fusePointwiseDepthwise = true
        func plans(_ passes: [any NNFusionPass]) throws -> [[NNStep]] {
            try graphs.flatMap { graph in
                try [NNTuning.gpu, lavapipeLimits].map { tuning in
                    var planner = NNPlanner(graph: graph, fuse: true, tuning: tuning)
                    try planner.run(passes: passes)
                    return planner.steps
                }
            }
        }
        let full = try plans(NNPlanner.passes)
        XCTAssertEqual(NNPlanner.passes.filter { $0 is NNLowerOperators }.count, 1)
        for (index, pass) in NNPlanner.passes.enumerated() where !(pass is NNLowerOperators) {
            var without = NNPlanner.passes
            without.remove(at: index)
            XCTAssertTrue(try plans(without) != full, "\(pass.name) changes no model's plan")
        }
    }

    func testArenaReusesMemory() throws {
        let url = try ModelFixtures.url("selfie_segmentation")
        let graph = try NNGraph(contentsOf: url)
        let plan = try NNModelPlan(context: context, graph: graph)
        let everyTensor = Set(graph.nodes.flatMap(\.outputs)).reduce(0) {
            $0 + NNTensorGeometry(shape: graph.tensors[$1].shape).vec4Count * 16
        }
        XCTAssertLessThan(plan.arenaByteCount, everyTensor / 3, "arena \(plan.arenaByteCount) B for \(everyTensor) B of tensors")
    }

    func testMemoryPlannerNeverOverlapsLiveTensors() {
        var random = SeededGenerator(state: 11)
        let requests = (0..<60).map { id -> NNMemoryPlanner.Request in
            let first = Int.random(in: 0..<40, using: &random)
            return .init(id: id, size: Int.random(in: 1...300, using: &random), firstStep: first,
                         lastStep: first + Int.random(in: 0...8, using: &random))
        }
        let (offsets, size) = NNMemoryPlanner.place(requests)
        for a in requests {
            XCTAssertLessThanOrEqual(offsets[a.id]! + a.size, size)
            for b in requests where a.id < b.id && a.firstStep <= b.lastStep && b.firstStep <= a.lastStep {
                let disjoint = offsets[a.id]! + a.size <= offsets[b.id]! || offsets[b.id]! + b.size <= offsets[a.id]!
                XCTAssertTrue(disjoint, "tensors \(a.id) and \(b.id) overlap while both alive")
            }
        }
    }

    func testUnsupportedOperatorIsALoadTimeErrorNamingIt() throws {
        let graph = NNGraph(tensors: [.init(name: "x", shape: [1, 4, 4, 8]), .init(name: "y", shape: [1, 4, 4, 8])],
                            constants: [:], nodes: [.init(kind: .builtin(.softmax), options: .softmax(beta: 1), inputs: [0], outputs: [1])],
                            inputs: [0], outputs: [1])
        XCTAssertThrowsError(try NNModelPlan(context: context, graph: graph)) { error in
            XCTAssertTrue("\(error)".contains("SOFTMAX"), "\(error)")
        }
        let custom = NNGraph(tensors: graph.tensors, constants: [:],
                             nodes: [.init(kind: .custom("MaxPoolingWithArgmax2D"), inputs: [0], outputs: [1])],
                             inputs: [0], outputs: [1])
        XCTAssertThrowsError(try NNModelPlan(context: context, graph: custom)) { error in
            XCTAssertTrue("\(error)".contains("MaxPoolingWithArgmax2D"), "\(error)")
        }
    }

    func testInconsistentShapesAreErrors() throws {
        // A 3x3 SAME stride-2 conv on 8x8 gives 4x4, not 8x8.
        let graph = NNGraph(tensors: [.init(name: "x", shape: [1, 8, 8, 4]), .init(name: "w", shape: [4, 3, 3, 4]),
                                      .init(name: "y", shape: [1, 8, 8, 4])],
                            constants: [1: .float([Float](repeating: 0, count: 144))],
                            nodes: [.init(kind: .builtin(.conv2D),
                                          options: .conv2D(.init(padding: .same, strideW: 2, strideH: 2, activation: .none,
                                                                 dilationW: 1, dilationH: 1)),
                                          inputs: [0, 1, -1], outputs: [2])],
                            inputs: [0], outputs: [2])
        XCTAssertThrowsError(try NNModelPlan(context: context, graph: graph)) { error in
            XCTAssertTrue("\(error)".contains("4x4x4"), "\(error)")
        }
    }

    func testImageToTensorSamplesThroughTheTransformAndMapsValues() throws {
        let context = try context
        let width = 16, height = 8
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                pixels[(y * width + x) * 4 + 0] = UInt8(x * 16)
                pixels[(y * width + x) * 4 + 1] = UInt8(y * 32)
                pixels[(y * width + x) * 4 + 2] = 255
                pixels[(y * width + x) * 4 + 3] = 255
            }
        }
        let image = try GPUImage(context: context, width: width, height: height, format: .rgba8)
        let buffer = try GPUBuffer(context: context, size: 4 * 4 * 16 + 64)
        let tensor = NNTensor(name: "in", buffer: buffer, byteOffset: 64, shape: [1, 4, 4, 3], layout: .packedNHWC4)
        let writer = try NNImageToTensor(context: context)
        let recorder = try CommandRecorder(context: context)
        try pixels.withUnsafeBytes { try recorder.upload($0, to: image) }
        // Tensor pixel (x, y) samples the centre of image pixel (2x + 10, y) and maps [0,1] to [-1,1];
        // the last tensor column lands outside the image and takes the border value.
        let transform = NNImageToTensor.Transform(a: 2, b: 0, c: 9.5, d: 0, e: 1, f: 0)
        try writer.record(on: recorder, image: image, transform: transform, into: tensor,
                          scale: (2, 2, 2), offset: (-1, -1, -1), border: .constant(-1, -1, -1))
        let readback = try recorder.download(buffer)
        try recorder.submit().wait()
        let values = NNModelPlan.floats(readback)
        for y in 0..<4 {
            for x in 0..<4 {
                let v = Array(values[(16 + (y * 4 + x) * 4)..<(16 + (y * 4 + x) * 4 + 4)])
                let imageX = 2 * x + 10
                let expected: [Float] = imageX >= width ? [-1, -1, -1, 0]
                    : [Float(imageX * 16) / 255 * 2 - 1, Float(y * 32) / 255 * 2 - 1, 1, 0]
                for c in 0..<4 {
                    XCTAssertEqual(v[c], expected[c], accuracy: 2e-3, "pixel \(x),\(y) channel \(c)")
                }
            }
        }
    }

    func testInferenceRecordsAlongsideOtherWorkAndOutputsStayOnTheGPU() throws {
        let context = try context
        let url = try ModelFixtures.url("face_landmark")
        let plan = try NNModelPlan(context: context, contentsOf: url)
        let input = NNTestInputs.pattern(height: 192, width: 192, range: 0...1)
        let expected = try plan.run([input])
        // One recorder: upload, two inferences back to back, then a download of the first
        // output copied by the GPU into another buffer.
        let recorder = try CommandRecorder(context: context)
        try plan.writeInput(input, on: recorder)
        plan.record(on: recorder)
        plan.record(on: recorder)
        let readbacks = try plan.readOutputs(on: recorder)
        try recorder.submit().wait()
        XCTAssertEqual(plan.outputs.map(\.shape), [[1, 1, 1, 1404], [1, 1, 1, 1]])
        XCTAssertEqual(plan.outputs.map(\.layout), [.dense, .dense])
        for (readback, values) in zip(readbacks, expected) {
            XCTAssertEqual(Array(NNModelPlan.floats(readback).prefix(values.count)), values)
        }
    }
}
