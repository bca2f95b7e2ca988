import Foundation
import VelvetGPU
import VelvetTestSupport
import XCTest
@testable import VelvetNN

/// Builds small graphs by hand for single-operator tests.
struct NNGraphBuilder {
    var tensors: [NNGraph.Tensor] = []
    var constants: [Int: NNGraph.Constant] = [:]
    var nodes: [NNGraph.Node] = []
    var random: SeededGenerator

    init(seed: UInt64) { random = SeededGenerator(state: seed) }

    mutating func tensor(_ shape: [Int]) -> Int {
        tensors.append(.init(name: "t\(tensors.count)", shape: shape))
        return tensors.count - 1
    }

    mutating func constant(_ shape: [Int], _ values: [Float]) -> Int {
        let index = tensor(shape)
        constants[index] = .float(values)
        return index
    }

    mutating func randomConstant(_ shape: [Int], scale: Float = 1) -> Int {
        let values = (0..<shape.reduce(1, *)).map { _ in Float.random(in: -scale...scale, using: &random) }
        return constant(shape, values)
    }

    mutating func ints(_ shape: [Int], _ values: [Int]) -> Int {
        let index = tensor(shape)
        constants[index] = .int(values)
        return index
    }

    @discardableResult
    mutating func op(_ kind: TFLiteOpKind, _ options: TFLiteOptions, custom: [UInt8]? = nil,
                     _ inputs: [Int], _ outputShape: [Int]) -> Int {
        let output = tensor(outputShape)
        nodes.append(.init(kind: kind, options: options, customOptions: custom, inputs: inputs, outputs: [output]))
        return output
    }

    /// An operator without options.
    @discardableResult
    mutating func op(_ kind: TFLiteOpKind, _ inputs: [Int], _ outputShape: [Int]) -> Int {
        op(kind, .none, inputs, outputShape)
    }

    /// A custom operator with raw options.
    mutating func op(_ kind: TFLiteOpKind, custom: [UInt8], _ inputs: [Int], _ outputShape: [Int]) -> Int {
        op(kind, .none, custom: custom, inputs, outputShape)
    }

    static func conv(_ padding: TFLitePadding, _ stride: Int, _ activation: TFLiteActivation = .none) -> TFLiteOptions {
        .conv2D(.init(padding: padding, strideW: stride, strideH: stride, activation: activation, dilationW: 1, dilationH: 1))
    }

    static func depthwise(_ padding: TFLitePadding, _ stride: Int, _ activation: TFLiteActivation = .none) -> TFLiteOptions {
        .depthwiseConv2D(.init(padding: padding, strideW: stride, strideH: stride, depthMultiplier: 1, activation: activation,
                               dilationW: 1, dilationH: 1))
    }

    static func pool(_ padding: TFLitePadding, _ filter: Int, _ stride: Int) -> TFLiteOptions {
        .pool2D(.init(padding: padding, strideW: stride, strideH: stride, filterW: filter, filterH: filter, activation: .none))
    }

    func graph(inputs: [Int], outputs: [Int]) -> NNGraph {
        NNGraph(tensors: tensors, constants: constants, nodes: nodes, inputs: inputs, outputs: outputs)
    }
}

/// Every operator the models use, on small odd shapes and every padding/stride variant,
/// against the double-precision reference. Each graph also runs unfused.
///
/// Tolerance 2e-5 absolute + 2e-5 relative: inputs and weights are O(1), sums have at
/// most a few hundred terms, so float32 rounding stays near 1e-6.
final class NNOpTests: GPUTestCase {
    nonisolated(unsafe) static var sharedKernels: NNKernels?

    private func kernels() throws -> NNKernels {
        let context = try context
        if let kernels = Self.sharedKernels, kernels.context === context { return kernels }
        let kernels = NNKernels(context: context)
        Self.sharedKernels = kernels
        return kernels
    }

    /// Runs `graph` on random inputs on the GPU (fused and unfused) and on the CPU.
    private func check(_ graph: NNGraph, seed: UInt64 = 1, _ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        var random = SeededGenerator(state: seed)
        let inputs = graph.inputs.map { index in
            (0..<graph.tensors[index].shape.reduce(1, *)).map { _ in Float.random(in: -2...2, using: &random) }
        }
        let reference = try NNReference(graph: graph).run(inputs)
        for fuse in [true, false] {
            let plan = try NNModelPlan(context: context, graph: graph, kernels: kernels(), options: .init(fuse: fuse))
            let outputs = try plan.run(inputs)
            for (index, (ours, expected)) in zip(outputs, reference).enumerated() {
                XCTAssertEqual(ours.count, expected.count, "\(label) output \(index)", file: file, line: line)
                let worst = zip(ours, expected).enumerated().max { a, b in
                    abs(Double(a.element.0) - a.element.1) < abs(Double(b.element.0) - b.element.1)
                }
                if let worst, abs(Double(worst.element.0) - worst.element.1) > 2e-5 + 2e-5 * abs(worst.element.1)
                    || !worst.element.0.isFinite {
                    XCTFail("\(label) (fuse \(fuse)) output \(index) element \(worst.offset): \(worst.element.0) vs \(worst.element.1)",
                            file: file, line: line)
                }
            }
        }
    }

    func testConv2DEveryKernelStrideAndPadding() throws {
        // (input H, W, C, output C, kernel, stride, padding, activation)
        let cases: [(Int, Int, Int, Int, Int, Int, TFLitePadding, TFLiteActivation)] = [
            (7, 5, 6, 10, 1, 1, .valid, .none),
            (8, 8, 3, 16, 3, 2, .same, .none),    // even input, 3x3 s2: pads (0, 1)
            (9, 10, 3, 8, 5, 2, .same, .relu),    // 5x5 s2: pads (1, 2) / (2, 2)
            (6, 7, 5, 7, 3, 1, .same, .relu6),
            (3, 3, 9, 13, 3, 3, .valid, .none),   // the mesh's FC-like heads
            (7, 7, 4, 6, 3, 3, .valid, .none),
            (20, 24, 8, 32, 1, 1, .valid, .relu), // enough pixels for 4 groups per invocation
            (5, 6, 7, 3, 3, 2, .valid, .none),
            (6, 5, 70, 37, 1, 1, .valid, .relu),  // few outputs, 18 input groups: split over input channels
            (3, 4, 128, 9, 1, 2, .same, .none),   // the same with stride 2
        ]
        for (h, w, c, o, k, s, padding, activation) in cases {
            var b = NNGraphBuilder(seed: UInt64(h * 100 + o))
            let x = b.tensor([1, h, w, c])
            let weights = b.randomConstant([o, k, k, c]), bias = b.randomConstant([o])
            let outH = padding == .same ? (h + s - 1) / s : (h - k) / s + 1
            let outW = padding == .same ? (w + s - 1) / s : (w - k) / s + 1
            let y = b.op(.builtin(.conv2D), NNGraphBuilder.conv(padding, s, activation), [x, weights, bias], [1, outH, outW, o])
            try check(b.graph(inputs: [x], outputs: [y]), "conv \(h)x\(w)x\(c)->\(o) k\(k) s\(s) \(padding)")
        }
    }

    func testDepthwiseConv2DEveryKernelStrideAndPadding() throws {
        let cases: [(Int, Int, Int, Int, Int, TFLitePadding)] = [
            (8, 8, 6, 3, 1, .same), (8, 9, 13, 3, 2, .same), (9, 9, 5, 5, 2, .same), (7, 6, 8, 5, 1, .same),
            (8, 8, 4, 3, 1, .valid), (10, 10, 3, 3, 2, .valid),
        ]
        for (h, w, c, k, s, padding) in cases {
            var b = NNGraphBuilder(seed: UInt64(h * 31 + c))
            let x = b.tensor([1, h, w, c])
            let weights = b.randomConstant([1, k, k, c]), bias = b.randomConstant([c])
            let outH = padding == .same ? (h + s - 1) / s : (h - k) / s + 1
            let outW = padding == .same ? (w + s - 1) / s : (w - k) / s + 1
            let y = b.op(.builtin(.depthwiseConv2D), NNGraphBuilder.depthwise(padding, s, .relu), [x, weights, bias], [1, outH, outW, c])
            try check(b.graph(inputs: [x], outputs: [y]), "depthwise \(h)x\(w)x\(c) k\(k) s\(s) \(padding)")
        }
    }

    func testBlazeBlockFusesResidualChannelPadAndActivations() throws {
        // dw 3x3 s2 -> conv 1x1 -> ADD(maxpool -> channel PAD) -> RELU, then dw -> conv -> ADD -> PRELU.
        var b = NNGraphBuilder(seed: 5)
        let x = b.tensor([1, 8, 8, 6])
        let d = b.op(.builtin(.depthwiseConv2D), NNGraphBuilder.depthwise(.same, 2),
                     [x, b.randomConstant([1, 3, 3, 6]), b.randomConstant([6])], [1, 4, 4, 6])
        let c = b.op(.builtin(.conv2D), NNGraphBuilder.conv(.valid, 1), [d, b.randomConstant([10, 1, 1, 6]), b.randomConstant([10])], [1, 4, 4, 10])
        let m = b.op(.builtin(.maxPool2D), NNGraphBuilder.pool(.valid, 2, 2), [x], [1, 4, 4, 6])
        let p = b.op(.builtin(.pad), [m, b.ints([4, 2], [0, 0, 0, 0, 0, 0, 0, 4])], [1, 4, 4, 10])
        let a = b.op(.builtin(.add), .add(activation: .none), [p, c], [1, 4, 4, 10])
        let r = b.op(.builtin(.relu), [a], [1, 4, 4, 10])
        let d2 = b.op(.builtin(.depthwiseConv2D), NNGraphBuilder.depthwise(.same, 1), [r, b.randomConstant([1, 3, 3, 10]), b.randomConstant([10])], [1, 4, 4, 10])
        let c2 = b.op(.builtin(.conv2D), NNGraphBuilder.conv(.valid, 1, .relu), [d2, b.randomConstant([10, 1, 1, 10]), b.randomConstant([10])], [1, 4, 4, 10])
        let a2 = b.op(.builtin(.add), .add(activation: .none), [r, c2], [1, 4, 4, 10])
        let out = b.op(.builtin(.prelu), [a2, b.randomConstant([1, 1, 10])], [1, 4, 4, 10])
        let graph = b.graph(inputs: [x], outputs: [out])
        try check(graph, "BlazeBlock")
        let plan = try NNModelPlan(context: context, graph: graph, kernels: kernels())
        // The skip path's max-pool runs inside the conv's residual read.
        XCTAssertEqual(plan.launchNames, ["depthwise3x3", "conv1x1", "depthwise3x3", "conv1x1", "unpack"])
    }

    /// The same block deep in a model: 40 channels on a 7x7 input, so the 1x1 conv shares
    /// its input channels over invocations, and a SAME 2x2 pool whose last window is cut by
    /// the edge; fused and unfused must agree with the reference.
    func testPooledResidualInTheSplitConvolution() throws {
        var b = NNGraphBuilder(seed: 11)
        let x = b.tensor([1, 7, 7, 40])
        let d = b.op(.builtin(.depthwiseConv2D), NNGraphBuilder.depthwise(.same, 2),
                     [x, b.randomConstant([1, 3, 3, 40]), b.randomConstant([40])], [1, 4, 4, 40])
        let c = b.op(.builtin(.conv2D), NNGraphBuilder.conv(.valid, 1), [d, b.randomConstant([48, 1, 1, 40]), b.randomConstant([48])], [1, 4, 4, 48])
        let m = b.op(.builtin(.maxPool2D), NNGraphBuilder.pool(.same, 2, 2), [x], [1, 4, 4, 40])
        let p = b.op(.builtin(.pad), [m, b.ints([4, 2], [0, 0, 0, 0, 0, 0, 0, 8])], [1, 4, 4, 48])
        let a = b.op(.builtin(.add), .add(activation: .none), [c, p], [1, 4, 4, 48])
        let out = b.op(.builtin(.prelu), [a, b.randomConstant([1, 1, 48])], [1, 4, 4, 48])
        let graph = b.graph(inputs: [x], outputs: [out])
        try check(graph, "pooled residual, split conv")
        let plan = try NNModelPlan(context: context, graph: graph, kernels: kernels())
        XCTAssertEqual(plan.launchNames, ["depthwise3x3", "conv1x1", "unpack"])
    }

    func testSpatialPadFoldsIntoTheFollowingConvolution() throws {
        // The full-range detector's pattern: PAD 1 on each side, then a VALID conv / depthwise (fused ADD with RELU).
        var b = NNGraphBuilder(seed: 9)
        let x = b.tensor([1, 9, 8, 5])
        let pads = b.ints([4, 2], [0, 0, 1, 1, 1, 1, 0, 0])
        let p = b.op(.builtin(.pad), [x, pads], [1, 11, 10, 5])
        let c = b.op(.builtin(.conv2D), NNGraphBuilder.conv(.valid, 2, .relu), [p, b.randomConstant([8, 3, 3, 5]), b.randomConstant([8])], [1, 5, 4, 8])
        let p2 = b.op(.builtin(.pad), [c, pads], [1, 7, 6, 8])
        let d = b.op(.builtin(.depthwiseConv2D), NNGraphBuilder.depthwise(.valid, 1), [p2, b.randomConstant([1, 3, 3, 8]), b.randomConstant([8])], [1, 5, 4, 8])
        let a = b.op(.builtin(.add), .add(activation: .relu), [c, d], [1, 5, 4, 8])
        let graph = b.graph(inputs: [x], outputs: [a])
        try check(graph, "pad + valid conv")
        let plan = try NNModelPlan(context: context, graph: graph, kernels: kernels())
        XCTAssertEqual(plan.launchNames, ["conv3x3", "depthwise3x3", "unpack"])
    }

    func testElementwiseOpsAndActivations() throws {
        var b = NNGraphBuilder(seed: 3)
        let x = b.tensor([1, 5, 3, 7]), y = b.tensor([1, 5, 3, 7]), v = b.tensor([1, 1, 1, 7])
        let sum = b.op(.builtin(.add), .add(activation: .relu6), [x, y], [1, 5, 3, 7])
        let product = b.op(.builtin(.mul), .mul(activation: .none), [v, sum], [1, 5, 3, 7])   // broadcast first
        let scaled = b.op(.builtin(.mul), .mul(activation: .none), [product, b.randomConstant([7])], [1, 5, 3, 7])
        var outputs = [scaled]
        for op in [TFLiteBuiltinOperator.relu, .relu6, .reluN1To1, .tanh, .logistic, .hardSwish] {
            outputs.append(b.op(.builtin(op), [x], [1, 5, 3, 7]))
        }
        outputs.append(b.op(.builtin(.prelu), [y, b.randomConstant([1, 1, 7])], [1, 5, 3, 7]))
        try check(b.graph(inputs: [x, y, v], outputs: outputs), "elementwise")
    }

    func testPoolsAndMeans() throws {
        var b = NNGraphBuilder(seed: 4)
        let x = b.tensor([1, 9, 8, 6])
        let outputs = [
            b.op(.builtin(.maxPool2D), NNGraphBuilder.pool(.valid, 2, 2), [x], [1, 4, 4, 6]),
            b.op(.builtin(.maxPool2D), NNGraphBuilder.pool(.same, 3, 2), [x], [1, 5, 4, 6]),
            b.op(.builtin(.averagePool2D), NNGraphBuilder.pool(.same, 3, 1), [x], [1, 9, 8, 6]),
            b.op(.builtin(.averagePool2D), .pool2D(.init(padding: .valid, strideW: 8, strideH: 9, filterW: 8, filterH: 9, activation: .none)),
                 [x], [1, 1, 1, 6]),
            b.op(.builtin(.mean), .reducer(keepDims: true), [x, b.ints([2], [1, 2])], [1, 1, 1, 6]),
            b.op(.builtin(.mean), .reducer(keepDims: false), [x, b.ints([2], [2, 1])], [1, 6]),
        ]
        try check(b.graph(inputs: [x], outputs: outputs), "pools")
    }

    func testLayoutOps() throws {
        var c = NNGraphBuilder(seed: 6)
        let p = c.tensor([1, 4, 4, 2]), q = c.tensor([1, 2, 2, 8]), r = c.tensor([1, 3, 4, 3]), s = c.tensor([1, 3, 4, 5])
        let rr = c.tensor([1, 2, 4, 3]), flat1 = c.tensor([1, 5, 1]), flat2 = c.tensor([1, 7, 1]), d4 = c.tensor([1, 3, 2, 4])
        let results = [
            c.op(.builtin(.pad), [r, c.ints([4, 2], [0, 0, 1, 2, 0, 1, 2, 3])], [1, 6, 5, 8]),
            c.op(.builtin(.reshape), [p, c.ints([3], [1, 16, 2])], [1, 16, 2]),
            c.op(.builtin(.reshape), [p, c.ints([3], [1, 32, 1])], [1, 32, 1]),
            c.op(.builtin(.reshape), [q, c.ints([3], [1, 8, 4])], [1, 8, 4]),
            c.op(.builtin(.concatenation), .concatenation(axis: 3, activation: .none), [r, s, r], [1, 3, 4, 11]),
            c.op(.builtin(.concatenation), .concatenation(axis: 1, activation: .none), [r, rr], [1, 5, 4, 3]),
            c.op(.builtin(.concatenation), .concatenation(axis: 1, activation: .none), [flat1, flat2], [1, 12, 1]),
            c.op(.builtin(.depthToSpace), .depthToSpace(blockSize: 2), [q], [1, 4, 4, 2]),
            c.op(.builtin(.depthToSpace), .depthToSpace(blockSize: 2), [d4], [1, 6, 4, 1]),
        ]
        try check(c.graph(inputs: [p, q, r, s, rr, flat1, flat2, d4], outputs: results), "layout ops")
    }

    func testResizeBilinear() throws {
        var b = NNGraphBuilder(seed: 8)
        let x = b.tensor([1, 5, 7, 6])
        let size = b.ints([2], [10, 14])
        let outputs = [
            b.op(.builtin(.resizeBilinear), .resizeBilinear(.init(alignCorners: false, halfPixelCenters: true)), [x, size], [1, 10, 14, 6]),
            b.op(.builtin(.resizeBilinear), .resizeBilinear(.init(alignCorners: false, halfPixelCenters: true)), [x, b.ints([2], [9, 4])], [1, 9, 4, 6]),
            b.op(.builtin(.resizeBilinear), .resizeBilinear(.init(alignCorners: true, halfPixelCenters: false)), [x, b.ints([2], [9, 4])], [1, 9, 4, 6]),
            b.op(.builtin(.resizeBilinear), .resizeBilinear(.init(alignCorners: false, halfPixelCenters: false)), [x, size], [1, 10, 14, 6]),
        ]
        try check(b.graph(inputs: [x], outputs: outputs), "resize")
    }

    func testConvolution2DTransposeBias() throws {
        // MediaPipe's custom op: raw TfLiteTransposeConvParams {padding, stride_w, stride_h}, then LOGISTIC.
        func params(_ padding: Int32, _ stride: Int32) -> [UInt8] {
            [padding, stride, stride].flatMap { withUnsafeBytes(of: $0.littleEndian, Array.init) }
        }
        var b = NNGraphBuilder(seed: 12)
        let x = b.tensor([1, 6, 5, 16])
        let t = b.op(.custom("Convolution2DTransposeBias"), custom: params(1, 2), [x, b.randomConstant([1, 2, 2, 16]), b.randomConstant([1])], [1, 12, 10, 1])
        let s = b.op(.builtin(.logistic), [t], [1, 12, 10, 1])
        let v = b.op(.custom("Convolution2DTransposeBias"), custom: params(2, 2), [x, b.randomConstant([5, 3, 3, 16]), b.randomConstant([5])], [1, 13, 11, 5])
        try check(b.graph(inputs: [x], outputs: [s, v]), "transpose conv")
    }
}
