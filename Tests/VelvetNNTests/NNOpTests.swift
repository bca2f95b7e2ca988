import Foundation
import VelvetGPU
import VelvetTestSupport
import XCTest
@testable import VelvetNN

extension NNTuning {
    /// The GPU tuning pairing every pair that fits, in 256-invocation workgroups, so tests
    /// cover all of nn_block_pair.comp (the GPU tuning itself runs pairs in 1024).
    static let withBlockPairs: NNTuning = {
        var tuning = NNTuning.gpu
        tuning.fuseBlockPairs = true
        tuning.blockPairMinimumTile = 2
        tuning.blockPairMaxInputGroups = 256
        tuning.blockPairMaxMiddleGroups = 256
        tuning.blockPairMinimumWorkgroups = 0
        tuning.blockPairThreads = 256
        return tuning
    }()

    /// Every pair in tiles of 2 and 1024-invocation workgroups, where most of them share
    /// each 1x1 sum two or four ways.
    static let withPairsInTilesOf2: NNTuning = {
        var tuning = NNTuning.withBlockPairs
        tuning.blockPairThreads = 1024
        tuning.blockPairTileLimit = 2
        return tuning
    }()
}

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

    /// Runs `graph` on random inputs on the GPU (fused and unfused, and under `tunings`
    /// too) and on the CPU.
    private func check(_ graph: NNGraph, seed: UInt64 = 1, _ label: String, tunings: [NNTuning] = [],
                       file: StaticString = #filePath, line: UInt = #line) throws {
        var random = SeededGenerator(state: seed)
        let inputs = graph.inputs.map { index in
            (0..<graph.tensors[index].shape.reduce(1, *)).map { _ in Float.random(in: -2...2, using: &random) }
        }
        let reference = try NNReference(graph: graph).run(inputs)
        let configurations: [NNModelPlan.Options] = [.init(fuse: true, tuning: .gpu), .init(fuse: true, tuning: .withBlockPairs),
                                                     .init(fuse: true, tuning: .cpu), .init(fuse: false)]
            + tunings.map { .init(fuse: true, tuning: $0) }
        for options in configurations {
            let fuse = "\(options.fuse)\(options.tuning == .cpu ? " tuned for a CPU" : options.tuning == .gpu ? "" : " tuned \(options.tuning)")"
            let plan = try NNModelPlan(context: context, graph: graph, kernels: kernels(), options: options)
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
            (3, 3, 32, 21, 3, 1, .valid, .none),  // the mesh's heads: a 3x3 sum split over taps and groups
            (5, 4, 40, 12, 3, 2, .same, .relu),   // the same, with taps past the edge
            (3, 3, 192, 12, 1, 1, .valid, .none), // 48 groups: 16 invocations per output
            (2, 3, 64, 8, 3, 1, .same, .none),    // 144 terms: 32 invocations per output
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

    /// A depthwise convolution and the 1x1 reading it run as one launch; the cases cover
    /// every tiling branch: sums shared by 1-16 invocations, tiles cut short by a deep
    /// middle tensor (300 channels) or by the image's end, output groups spread over
    /// workgroups, an activation between the two, and a residual with PRELU after.
    func testDepthwiseThenPointwiseInOneLaunch() throws {
        // (H, W, middle C, output C, kernel, stride, depthwise activation, residual)
        let cases: [(Int, Int, Int, Int, Int, Int, TFLiteActivation, Bool)] = [
            (9, 7, 6, 10, 3, 1, .none, false),
            (20, 21, 30, 12, 5, 2, .relu, false),
            (5, 5, 300, 44, 3, 1, .none, false),
            (33, 33, 16, 16, 3, 1, .relu6, true),
            (3, 3, 128, 128, 3, 1, .none, true),
            (6, 6, 160, 16, 3, 1, .none, false),
            (5, 6, 64, 20, 3, 1, .none, false),
            (120, 100, 8, 32, 3, 1, .none, false),
        ]
        for (h, w, c, o, k, s, activation, residual) in cases {
            var b = NNGraphBuilder(seed: UInt64(h * 17 + c + o))
            let x = b.tensor([1, h, w, c])
            let outH = (h + s - 1) / s, outW = (w + s - 1) / s
            let d = b.op(.builtin(.depthwiseConv2D), NNGraphBuilder.depthwise(.same, s, activation),
                         [x, b.randomConstant([1, k, k, c]), b.randomConstant([c])], [1, outH, outW, c])
            var y = b.op(.builtin(.conv2D), NNGraphBuilder.conv(.valid, 1),
                         [d, b.randomConstant([o, 1, 1, c], scale: 0.3), b.randomConstant([o])], [1, outH, outW, o])
            if residual {
                let a = b.op(.builtin(.add), .add(activation: .none), [y, x], [1, outH, outW, o])
                y = b.op(.builtin(.prelu), [a, b.randomConstant([1, 1, o])], [1, outH, outW, o])
            }
            let graph = b.graph(inputs: [x], outputs: [y])
            let label = "depthwise \(k)x\(k) s\(s) \(h)x\(w)x\(c) -> 1x1 -> \(o)"
            try check(graph, label)
            let plan = try NNModelPlan(context: context, graph: graph, kernels: kernels(), options: .init(tuning: .gpu))
            XCTAssertEqual(plan.launchNames, ["depthwise\(k)x\(k)+conv1x1", "unpack"], label)
        }
        // The tilings those cases take, so each branch above is known to run.
        let tilings = cases.map { h, w, c, o, _, s, _, _ in
            NNTuning.gpu.depthwisePointwiseTiling(pixels: ((h + s - 1) / s) * ((w + s - 1) / s),
                                                   middleGroups: (c + 3) / 4, outputGroups: (o + 3) / 4)
        }
        XCTAssertEqual(Set(tilings.map(\.slices)), [1, 2, 4, 8, 16])
        let pixels = cases.map { h, w, _, _, _, s, _, _ in ((h + s - 1) / s) * ((w + s - 1) / s) }
        XCTAssertTrue(zip(tilings, pixels).contains { $0.pixels < min($1, 64) }, "a tile smaller than its image: \(tilings)")
        XCTAssertTrue(tilings.contains { $0.groupsPerTile > 1 }, "a workgroup with several output groups: \(tilings)")
    }

    /// The detectors' bottleneck pairs: dw -> 1x1 -> dw -> 1x1 + the pair's input -> RELU, one
    /// launch when a tuning turns block pairs on (off by default: slower on the H200). Cases cover the three tile sides, a stride-2 first depthwise
    /// with a pooled and padded skip path (the second block then reads its own residual),
    /// 5x5 kernels, activations between the blocks and images that tiles do not divide.
    func testBlockPairsInOneLaunch() throws {
        // (H, W, C, middle C, first kernel, first stride, second kernel)
        let cases: [(Int, Int, Int, Int, Int, Int, Int)] = [
            (19, 21, 32, 8, 3, 1, 3),    // tile 8
            (14, 13, 16, 64, 3, 1, 3),   // tile 4
            (7, 9, 128, 32, 3, 1, 5),    // tile 2, 5x5
            (17, 15, 24, 12, 5, 2, 3),   // stride 2 first
            (12, 12, 192, 48, 3, 1, 3),  // the full-range detector's 12x12 pairs: tile 2
        ]
        for (h, w, c, m, ka, sa, kb) in cases {
            var b = NNGraphBuilder(seed: UInt64(h * 7 + c + m))
            let x = b.tensor([1, h, w, c])
            let yh = (h + sa - 1) / sa, yw = (w + sa - 1) / sa
            let d1 = b.op(.builtin(.depthwiseConv2D), NNGraphBuilder.depthwise(.same, sa, .relu),
                          [x, b.randomConstant([1, ka, ka, c]), b.randomConstant([c])], [1, yh, yw, c])
            let c1 = b.op(.builtin(.conv2D), NNGraphBuilder.conv(.valid, 1, .relu6),
                          [d1, b.randomConstant([m, 1, 1, c], scale: 0.3), b.randomConstant([m])], [1, yh, yw, m])
            let d2 = b.op(.builtin(.depthwiseConv2D), NNGraphBuilder.depthwise(.same, 1),
                          [c1, b.randomConstant([1, kb, kb, m]), b.randomConstant([m])], [1, yh, yw, m])
            let c2 = b.op(.builtin(.conv2D), NNGraphBuilder.conv(.valid, 1),
                          [d2, b.randomConstant([c, 1, 1, m], scale: 0.3), b.randomConstant([c])], [1, yh, yw, c])
            var skip = x
            if sa == 2 {
                skip = b.op(.builtin(.maxPool2D), NNGraphBuilder.pool(.same, 2, 2), [x], [1, yh, yw, c])
            }
            let sum = b.op(.builtin(.add), .add(activation: .relu), [c2, skip], [1, yh, yw, c])
            let graph = b.graph(inputs: [x], outputs: [sum])
            let label = "pair \(h)x\(w)x\(c) -> \(m), dw\(ka) s\(sa), dw\(kb)"
            try check(graph, label, tunings: [.withPairsInTilesOf2])
            let plan = try NNModelPlan(context: context, graph: graph, kernels: kernels(), options: .init(tuning: .withBlockPairs))
            if sa == 1 { // (a pooled skip path is not read inside a pair)
                XCTAssertEqual(plan.launchNames, ["block_pair", "unpack"], label)
            }
        }
        let tiles = cases.map { h, w, c, m, _, sa, kb in
            NNTuning.withBlockPairs.blockPairTile(firstGroups: (c + 3) / 4, middleGroups: (m + 3) / 4, secondKernel: kb,
                                                  height: (h + sa - 1) / sa, width: (w + sa - 1) / sa)
        }
        XCTAssertEqual(Set(tiles.compactMap { $0 }), [8, 4, 2])
        // The 1024-invocation runs shared some sums four ways and some two ways.
        let slices = cases.map { _, _, c, m, _, _, kb in
            NNTuning.withPairsInTilesOf2.blockPairSlices(tile: 2, firstGroups: (c + 3) / 4, middleGroups: (m + 3) / 4,
                                                        outputGroups: (c + 3) / 4, secondKernel: kb)
        }
        XCTAssertEqual(Set(slices), [1, 2, 4])
    }

    /// MobileNetV3's squeeze-and-excite: a global mean, two dense layers (1x1 convolutions
    /// of the 1x1 result) and the MUL that scales the input by them. Fused, the mean and
    /// the dense layers are one launch summed in bands by several workgroups (and the
    /// selfie decoder's ADD before the mean is summed there too); the second inference
    /// checks that the launch leaves its finish count ready for the next.
    func testSqueezeExciteInOneLaunch() throws {
        // (H, W, C, hidden C, AVERAGE_POOL_2D rather than MEAN, the mean's input an ADD)
        let cases: [(Int, Int, Int, Int, Bool, Bool)] = [
            (40, 40, 20, 8, true, false), (5, 7, 300, 24, false, false), (64, 64, 16, 16, true, true),
        ]
        for (h, w, c, hidden, pooled, summed) in cases {
            var b = NNGraphBuilder(seed: UInt64(h + c))
            let x = b.tensor([1, h, w, c]), other = b.tensor([1, h, w, c])
            let squeezed0 = summed ? b.op(.builtin(.add), .add(activation: .none), [x, other], [1, h, w, c]) : x
            let mean = pooled
                ? b.op(.builtin(.averagePool2D), .pool2D(.init(padding: .valid, strideW: w, strideH: h, filterW: w, filterH: h,
                                                                activation: .none)), [squeezed0], [1, 1, 1, c])
                : b.op(.builtin(.mean), .reducer(keepDims: true), [squeezed0, b.ints([2], [1, 2])], [1, 1, 1, c])
            let squeezed = b.op(.builtin(.conv2D), NNGraphBuilder.conv(.valid, 1, .relu),
                                [mean, b.randomConstant([hidden, 1, 1, c]), b.randomConstant([hidden])], [1, 1, 1, hidden])
            let excited = b.op(.builtin(.conv2D), NNGraphBuilder.conv(.valid, 1),
                               [squeezed, b.randomConstant([c, 1, 1, hidden]), b.randomConstant([c])], [1, 1, 1, c])
            let gate = b.op(.builtin(.logistic), [excited], [1, 1, 1, c])
            let y = b.op(.builtin(.mul), .mul(activation: .none), [x, gate], [1, h, w, c])
            let graph = b.graph(inputs: summed ? [x, other] : [x], outputs: [y])
            let label = "squeeze-excite \(h)x\(w)x\(c)\(summed ? " of a sum" : "")"
            try check(graph, label)
            let plan = try NNModelPlan(context: context, graph: graph, kernels: kernels(), options: .init(tuning: .gpu))
            XCTAssertEqual(plan.launchNames, [summed ? "add+mean+dense2" : "mean+dense2", "mul", "unpack"], label)
            let inputs = graph.inputs.indices.map { NNTestInputs.random(count: h * w * c, seed: 4 + UInt32($0), range: -1...1) }
            XCTAssertEqual(try plan.run(inputs), try plan.run(inputs), label)
        }
        let bands = cases.map { h, w, c, _, _, _ in NNTuning.gpu.squeezeExciteBands(pixels: h * w, groups: (c + 3) / 4).workgroups }
        XCTAssertTrue(bands.contains { $0 > 1 }, "several workgroups share a mean: \(bands)")
    }

    /// The selfie decoder's skip * gate + path: the ADD after a MUL runs in the MUL's launch.
    func testMultiplyThenAddInOneLaunch() throws {
        var b = NNGraphBuilder(seed: 21)
        let skip = b.tensor([1, 9, 7, 10]), gate = b.tensor([1, 1, 1, 10]), path = b.tensor([1, 9, 7, 10])
        let product = b.op(.builtin(.mul), .mul(activation: .none), [skip, gate], [1, 9, 7, 10])
        let sum = b.op(.builtin(.add), .add(activation: .relu), [path, product], [1, 9, 7, 10])
        let graph = b.graph(inputs: [skip, gate, path], outputs: [sum])
        try check(graph, "mul + add")
        let plan = try NNModelPlan(context: context, graph: graph, kernels: kernels(), options: .init(tuning: .gpu))
        XCTAssertEqual(plan.launchNames, ["mul+add", "unpack"])
    }

    /// A MUL by a gate vector read only by a CONV_2D: the convolution scales its input
    /// channels as it reads them (both convolution kernels: plain and split sums).
    func testGateMultiplyFoldsIntoTheConvolution() throws {
        for (h, w, c, o, k) in [(9, 8, 12, 10, 1), (4, 4, 96, 32, 1), (5, 5, 40, 8, 3)] {
            var b = NNGraphBuilder(seed: UInt64(c + o))
            let x = b.tensor([1, h, w, c]), gate = b.tensor([1, 1, 1, c])
            let scaled = b.op(.builtin(.mul), .mul(activation: .none), [x, gate], [1, h, w, c])
            let y = b.op(.builtin(.conv2D), NNGraphBuilder.conv(.same, 1, .relu),
                         [scaled, b.randomConstant([o, k, k, c], scale: 0.3), b.randomConstant([o])], [1, h, w, o])
            let graph = b.graph(inputs: [x, gate], outputs: [y])
            try check(graph, "gate \(h)x\(w)x\(c) -> conv\(k)x\(k) -> \(o)")
            let plan = try NNModelPlan(context: context, graph: graph, kernels: kernels(), options: .init(tuning: .gpu))
            XCTAssertEqual(plan.launchNames, ["mul+conv\(k)x\(k)", "unpack"])
        }
    }

    /// A RESIZE_BILINEAR read only by a 1x1 CONV_2D: the convolution reads the resize's
    /// input through it (plain and split-sum kernels, every resize mode, with a gate MUL
    /// before the resize folded too).
    func testResizeFoldsIntoThePointwiseConvolution() throws {
        let modes: [TFLiteOptions.Resize] = [.init(alignCorners: false, halfPixelCenters: true),
                                                   .init(alignCorners: true, halfPixelCenters: false),
                                                   .init(alignCorners: false, halfPixelCenters: false)]
        for (h, w, c, o, mode) in [(5, 7, 12, 10, modes[0]), (5, 7, 12, 10, modes[1]), (4, 3, 12, 6, modes[2]), (4, 4, 96, 32, modes[0])] {
            for gated in [false, true] {
                var b = NNGraphBuilder(seed: UInt64(c + o + (gated ? 1 : 0)))
                let x = b.tensor([1, h, w, c]), gate = b.tensor([1, 1, 1, c])
                let source = gated ? b.op(.builtin(.mul), .mul(activation: .none), [x, gate], [1, h, w, c]) : x
                let resized = b.op(.builtin(.resizeBilinear), .resizeBilinear(mode), [source, b.ints([2], [2 * h + 1, 2 * w])],
                                   [1, 2 * h + 1, 2 * w, c])
                let y = b.op(.builtin(.conv2D), NNGraphBuilder.conv(.same, 1, .relu),
                             [resized, b.randomConstant([o, 1, 1, c], scale: 0.3), b.randomConstant([o])], [1, 2 * h + 1, 2 * w, o])
                let graph = b.graph(inputs: gated ? [x, gate] : [x], outputs: [y])
                try check(graph, "resize \(h)x\(w)x\(c) \(mode) -> conv1x1 -> \(o)\(gated ? ", gated" : "")")
                let plan = try NNModelPlan(context: context, graph: graph, kernels: kernels(), options: .init(tuning: .gpu))
                XCTAssertEqual(plan.launchNames, [gated ? "mul+resize+conv1x1" : "resize+conv1x1", "unpack"])
            }
        }
    }

    /// A depthwise convolution whose output only a graph output reads (through a
    /// DEPTH_TO_SPACE and a RESHAPE, as the full-range detector's heads, or directly)
    /// writes the output buffer itself; one also read by another operator does not.
    func testDepthwiseWritesTheGraphOutput() throws {
        var b = NNGraphBuilder(seed: 31)
        let x = b.tensor([1, 9, 10, 20])
        let d = b.op(.builtin(.depthwiseConv2D), NNGraphBuilder.depthwise(.same, 2, .relu),
                     [x, b.randomConstant([1, 3, 3, 20]), b.randomConstant([20])], [1, 5, 5, 20])
        let s = b.op(.builtin(.depthToSpace), .depthToSpace(blockSize: 2), [d], [1, 10, 10, 5])
        let flat = b.op(.builtin(.reshape), [s, b.ints([3], [1, 100, 5])], [1, 100, 5])
        let e = b.op(.builtin(.depthwiseConv2D), NNGraphBuilder.depthwise(.valid, 1),
                     [x, b.randomConstant([1, 3, 3, 20]), b.randomConstant([20])], [1, 7, 8, 20])
        let f = b.op(.builtin(.depthwiseConv2D), NNGraphBuilder.depthwise(.same, 1),
                     [x, b.randomConstant([1, 3, 3, 20]), b.randomConstant([20])], [1, 9, 10, 20])
        let g = b.op(.builtin(.add), .add(activation: .none), [f, x], [1, 9, 10, 20])
        let h = b.op(.builtin(.logistic), [f], [1, 9, 10, 20])
        let graph = b.graph(inputs: [x], outputs: [flat, e, g, h])
        try check(graph, "depthwise to output")
        let plan = try NNModelPlan(context: context, graph: graph, kernels: kernels(), options: .init(tuning: .gpu))
        XCTAssertEqual(plan.launchNames.filter { $0.hasSuffix("unpack") }.sorted(),
                       ["depthwise3x3+depth_to_space+unpack", "depthwise3x3+unpack", "unpack", "unpack"])
    }

    /// A 1x1 convolution read only by a depthwise one: one launch, the 1x1 recomputed
    /// around each tile (SAME padding read as zeros), writing a graph output's dense
    /// buffer (the full-range detector's heads: stride 2, then DEPTH_TO_SPACE) or a tensor.
    func testPointwiseThenDepthwiseInOneLaunch() throws {
        // (H, W, C, middle C, depthwise kernel, stride, DEPTH_TO_SPACE into the output)
        let cases: [(Int, Int, Int, Int, Int, Int, Bool)] = [
            (13, 11, 20, 24, 3, 2, true), (24, 24, 48, 64, 3, 2, true), (24, 24, 48, 4, 3, 2, true), (9, 10, 12, 8, 5, 1, false),
        ]
        for (h, w, c, m, k, stride, toOutput) in cases {
            var b = NNGraphBuilder(seed: UInt64(h * 3 + c + m))
            let x = b.tensor([1, h, w, c])
            let oh = (h + stride - 1) / stride, ow = (w + stride - 1) / stride
            let y = b.op(.builtin(.conv2D), NNGraphBuilder.conv(.same, 1, .relu),
                         [x, b.randomConstant([m, 1, 1, c], scale: 0.3), b.randomConstant([m])], [1, h, w, m])
            let z = b.op(.builtin(.depthwiseConv2D), NNGraphBuilder.depthwise(.same, stride, toOutput ? .none : .relu6),
                         [y, b.randomConstant([1, k, k, m]), b.randomConstant([m])], [1, oh, ow, m])
            let label = "1x1 \(h)x\(w)x\(c) -> \(m), dw\(k) s\(stride)"
            if toOutput {
                let s = b.op(.builtin(.depthToSpace), .depthToSpace(blockSize: 2), [z], [1, oh * 2, ow * 2, m / 4])
                let flat = b.op(.builtin(.reshape), [s, b.ints([3], [1, oh * ow * 4, m / 4])], [1, oh * ow * 4, m / 4])
                let graph = b.graph(inputs: [x], outputs: [flat])
                try check(graph, label)
                let plan = try NNModelPlan(context: context, graph: graph, kernels: kernels(), options: .init(tuning: .gpu))
                XCTAssertEqual(plan.launchNames, ["conv1x1+depthwise3x3+depth_to_space+unpack"], label)
            } else {
                // Read by two operators, the depthwise output is a tensor.
                let first = b.op(.builtin(.logistic), [z], [1, oh, ow, m])
                let second = b.op(.builtin(.add), .add(activation: .none), [z, z], [1, oh, ow, m])
                let graph = b.graph(inputs: [x], outputs: [first, second])
                try check(graph, label)
                let plan = try NNModelPlan(context: context, graph: graph, kernels: kernels(), options: .init(tuning: .gpu))
                XCTAssertEqual(plan.launchNames.first, "conv1x1+depthwise5x5", label)
                XCTAssertEqual(plan.launchCount, 5, label)
            }
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
        // The skip path's max-pool runs inside the conv's residual read, and each depthwise
        // in one launch with its 1x1.
        let plan = try NNModelPlan(context: context, graph: graph, kernels: kernels(), options: .init(tuning: .gpu))
        XCTAssertEqual(plan.launchNames, ["depthwise3x3+conv1x1", "depthwise3x3+conv1x1", "unpack"])
        let apart = try NNModelPlan(context: context, graph: graph, kernels: kernels(), options: .init(tuning: .cpu))
        XCTAssertEqual(apart.launchNames, ["depthwise3x3", "conv1x1", "depthwise3x3", "conv1x1", "unpack"])
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
        let plan = try NNModelPlan(context: context, graph: graph, kernels: kernels(), options: .init(tuning: .cpu))
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
        let plan = try NNModelPlan(context: context, graph: graph, kernels: kernels(), options: .init(tuning: .gpu))
        // (The depthwise, with the ADD fused, writes the graph output itself.)
        XCTAssertEqual(plan.launchNames, ["conv3x3", "depthwise3x3+unpack"])
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
