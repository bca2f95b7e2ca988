import XCTest
import VelvetNN

/// The five MediaPipe 0.10.21 models against the inputs, outputs, operators and parameter
/// counts LiteRT reports for them (recorded below; the notes they came from are not in the repository).
final class RealModelTests: XCTestCase {
    struct Expectation {
        var inputs: [(String, [Int])]
        var outputs: [(String, [Int])]
        var ops: [TFLiteOpKind: Int]
        /// Float32 parameters after folding, in thousands (the doc's "params").
        var kiloParams: Int?
    }

    static let convTranspose = TFLiteOpKind.custom("Convolution2DTransposeBias")

    static func ops(_ pairs: [(TFLiteBuiltinOperator, Int)], custom: [TFLiteOpKind: Int] = [:]) -> [TFLiteOpKind: Int] {
        var result = custom
        for (op, n) in pairs { result[.builtin(op)] = n }
        return result
    }

    static let expectations: [String: Expectation] = [
        "face_detection_short_range": Expectation(
            inputs: [("input", [1, 128, 128, 3])],
            outputs: [("regressors", [1, 896, 16]), ("classificators", [1, 896, 1])],
            ops: ops([(.dequantize, 74), (.conv2D, 21), (.relu, 17), (.depthwiseConv2D, 16), (.add, 16),
                      (.pad, 11), (.reshape, 4), (.maxPool2D, 3), (.concatenation, 2)]),
            kiloParams: 101),
        "face_landmark": Expectation(
            inputs: [("input_1", [1, 192, 192, 3])],
            outputs: [("conv2d_21", [1, 1, 1, 1404]), ("conv2d_31", [1, 1, 1, 1])],
            ops: ops([(.dequantize, 113), (.conv2D, 25), (.prelu, 23), (.depthwiseConv2D, 20), (.add, 20),
                      (.maxPool2D, 6), (.pad, 3)]),
            kiloParams: 605),
        "selfie_segmentation": Expectation(
            inputs: [("input_1", [1, 256, 256, 3])],
            outputs: [("activation_10", [1, 256, 256, 1])],
            ops: ops([(.dequantize, 110), (.conv2D, 43), (.relu, 22), (.add, 14), (.hardSwish, 11),
                      (.depthwiseConv2D, 11), (.logistic, 11), (.averagePool2D, 10), (.mul, 10),
                      (.resizeBilinear, 3)], custom: [convTranspose: 1]),
            kiloParams: 106),
        "selfie_segmentation_landscape": Expectation(
            inputs: [("input_1", [1, 144, 256, 3])],
            outputs: [("segment_back", [1, 144, 256, 1])],
            ops: ops([(.dequantize, 110), (.conv2D, 43), (.relu, 22), (.add, 14), (.hardSwish, 11),
                      (.depthwiseConv2D, 11), (.logistic, 11), (.mean, 10), (.mul, 10),
                      (.resizeBilinear, 3)], custom: [convTranspose: 1]),
            kiloParams: 106),
        "face_detection_full_range_sparse": Expectation(
            inputs: [("input_1", [1, 192, 192, 3])],
            outputs: [("Identity", [1, 2304, 16]), ("Identity_1", [1, 2304, 1])],
            ops: ops([(.dequantize, 182), (.conv2D, 49), (.densify, 46), (.depthwiseConv2D, 42), (.pad, 43),
                      (.add, 19), (.resizeBilinear, 3), (.depthToSpace, 2), (.reshape, 2)]),
            kiloParams: nil),
    ]

    func testEveryModelMatchesTheDocTables() throws {
        for name in ModelFixtures.names {
            let model = try ModelFixtures.model(name)
            let expected = try XCTUnwrap(Self.expectations[name])
            XCTAssertEqual(model.subgraphCount, 1, name)
            XCTAssertEqual(model.operatorCounts, expected.ops, name)
            XCTAssertEqual(model.inputTensors.map(\.name), expected.inputs.map(\.0), name)
            XCTAssertEqual(model.inputTensors.map(\.shape), expected.inputs.map(\.1), name)
            XCTAssertEqual(model.outputTensors.map(\.name), expected.outputs.map(\.0), name)
            XCTAssertEqual(model.outputTensors.map(\.shape), expected.outputs.map(\.1), name)
            XCTAssertTrue((model.inputTensors + model.outputTensors).allSatisfy { $0.type == .float32 }, name)
        }
    }

    func testDequantizeAndDensifyFoldAway() throws {
        for name in ModelFixtures.names {
            let model = try ModelFixtures.model(name)
            let graph = try TFLiteGraph(model: model)
            let counts = model.operatorCounts
            let foldable = (counts[.builtin(.dequantize)] ?? 0) + (counts[.builtin(.densify)] ?? 0)
            XCTAssertEqual(graph.foldedOperatorCount, foldable, name)
            XCTAssertEqual(graph.nodes.count, model.operators.count - foldable, name)
            XCTAssertNil(graph.nodeCounts[.builtin(.dequantize)], name)
            XCTAssertNil(graph.nodeCounts[.builtin(.densify)], name)

            // Every weight input is now a float32 constant of the operator's shape.
            for node in graph.nodes {
                for case .constant(let index) in node.inputs {
                    let constant = try XCTUnwrap(graph.constants[index], "\(name) tensor \(index)")
                    XCTAssertEqual(constant.shape, model.tensors[index].shape, "\(name) \(constant.name)")
                    if model.tensors[index].type == .float32 {
                        XCTAssertEqual(constant.float32?.count, model.tensors[index].elementCount)
                    }
                }
            }
            // Only the graph inputs and operator outputs are runtime tensors.
            for node in graph.nodes {
                for case .runtime(let index) in node.inputs {
                    XCTAssertFalse(model.tensors[index].isConstant, "\(name) tensor \(index)")
                }
            }
            if let kilo = Self.expectations[name]?.kiloParams {
                let params = graph.constants.values.compactMap { $0.float32?.count }.reduce(0, +)
                XCTAssertEqual((params + 500) / 1000, kilo, "\(name) has \(params) float32 parameters")
            }
        }
    }

    func testWeightsAreFloat16AndActivationsAreSeparateExceptFullRange() throws {
        for name in ModelFixtures.names {
            let model = try ModelFixtures.model(name)
            XCTAssertFalse(model.tensors.contains { $0.type == .int8 || $0.type == .uint8 }, name)
            for op in model.operators where op.builtin == .dequantize {
                XCTAssertEqual(model.tensors[op.inputs[0]].type, .float16, name)
            }
            guard name != "face_detection_full_range_sparse" else { continue }
            for op in model.operators {
                XCTAssertEqual(op.options.activation ?? .none, .none, "\(name) operator \(op.index) \(op.kind)")
            }
        }
    }

    /// Checksums of folded constants, taken from LiteRT's own DEQUANTIZE /
    /// DENSIFY kernels (count, sum, and sum of v[i] * (i % 1009 + 1)).
    func testFoldedConstantsMatchLiteRT() throws {
        let golden: [(model: String, tensor: String, count: Int, sum: Double, weighted: Double)] = [
            ("face_detection_short_range", "conv2d_3/Bias_dequantize", 32, 17.890625, 264.350830078125),
            ("face_landmark", "conv2d_3/Bias_dequantize", 16, 6.55548095703125, 59.73968505859375),
            ("selfie_segmentation", "conv2d_2/Kernel_dequantize", 128, -0.23302078247070304, -151.70997619628906),
            ("selfie_segmentation_landscape", "conv2d_1/Kernel_dequantize", 256, 4.51319694519043, 332.6245822906494),
            ("face_detection_full_range_sparse", "model_1/model/conv2d/Conv2D_dequantize", 864, -4.4364697933197, -3735.8440170288086),
            // Densified, then dequantized.
            ("face_detection_full_range_sparse", "model_1/model/conv2d_1/Conv2D_dequantize2", 256, -2.4001846313476562, -614.7289276123047),
            ("face_detection_full_range_sparse", "model_1/model/conv2d_2/Conv2D_dequantize2", 256, 6.5143303871154785, 1179.3105773925781),
            ("face_detection_full_range_sparse", "model_1/model/conv2d_29/Conv2D_dequantize2", 36864, -12.267800211906433, -6366.807590186596),
            ("face_detection_full_range_sparse", "model_1/model/conv2d_31/Conv2D_dequantize2", 36864, 31.683204531669617, 17021.273276925087),
        ]
        var graphs: [String: TFLiteGraph] = [:]
        for g in golden {
            if graphs[g.model] == nil { graphs[g.model] = try TFLiteGraph(model: try ModelFixtures.model(g.model)) }
            let graph = try XCTUnwrap(graphs[g.model])
            let tensor = try XCTUnwrap(graph.model.tensor(named: g.tensor), g.tensor)
            let values = try XCTUnwrap(graph.constantFloat32(tensor.index), g.tensor)
            var sum = 0.0, weighted = 0.0
            for (i, v) in values.enumerated() {
                sum += Double(v)
                weighted += Double(v) * Double(i % 1009 + 1)
            }
            XCTAssertEqual(values.count, g.count, g.tensor)
            XCTAssertEqual(sum, g.sum, accuracy: 1e-9 * max(1, abs(g.sum)), g.tensor)
            XCTAssertEqual(weighted, g.weighted, accuracy: 1e-9 * max(1, abs(g.weighted)), g.tensor)
        }
    }

    func testFullRangeSparsityAndFusedActivations() throws {
        let model = try ModelFixtures.model("face_detection_full_range_sparse")
        let densifyInputs = model.operators.filter { $0.builtin == .densify }.map { model.tensors[$0.inputs[0]] }
        XCTAssertEqual(densifyInputs.count, 46)
        for tensor in densifyInputs {
            let sparsity = try XCTUnwrap(tensor.sparsity, tensor.name)
            XCTAssertEqual(tensor.type, .float16)
            XCTAssertEqual(sparsity.traversalOrder, [0, 1, 2, 3])
            XCTAssertEqual(sparsity.blockMap, [])
            XCTAssertEqual(sparsity.dimensions.map(\.format), [.dense, .dense, .dense, .sparseCSR])
            XCTAssertEqual(sparsity.dimensions.prefix(3).map(\.denseSize), Array(tensor.shape.prefix(3)))
        }
        let reluConvs = model.operators.filter { $0.builtin == .conv2D && $0.options.activation == .relu }
        let reluAdds = model.operators.filter { $0.builtin == .add && $0.options.activation == .relu }
        XCTAssertEqual(reluConvs.count, 31)
        XCTAssertEqual(reluAdds.count, 16)
        for op in model.operators where op.builtin == .depthToSpace {
            XCTAssertEqual(op.options, .depthToSpace(blockSize: 2))
        }
    }

    func testOptionsTheKernelsRelyOn() throws {
        for name in ModelFixtures.names {
            let model = try ModelFixtures.model(name)
            let graph = try TFLiteGraph(model: model)
            for op in model.operators {
                switch op.options {
                case .pool2D(let p) where op.builtin == .maxPool2D:
                    XCTAssertEqual([p.filterW, p.filterH, p.strideW, p.strideH], [2, 2, 2, 2], name)
                case .resizeBilinear(let r):
                    XCTAssertEqual(r, .init(alignCorners: false, halfPixelCenters: true), name)
                default: break
                }
            }
            for node in graph.nodes where node.op.builtin == .mean {
                guard case .constant(let axes) = node.inputs[1] else { return XCTFail("MEAN axes not constant") }
                XCTAssertEqual(graph.constants[axes]?.int32, [1, 2], name)
                XCTAssertEqual(node.op.options, .reducer(keepDims: true), name)
            }
            for node in graph.nodes where node.op.builtin == .prelu {
                guard case .constant(let alpha) = node.inputs[1] else { return XCTFail("PRELU alpha not constant") }
                let shape = try XCTUnwrap(graph.constants[alpha]).shape
                XCTAssertEqual(shape.count, 3, name)
                XCTAssertEqual(Array(shape.prefix(2)), [1, 1], name)
            }
            for node in graph.nodes where node.op.builtin == .pad {
                guard case .constant(let pads) = node.inputs[1] else { return XCTFail("PAD paddings not constant") }
                let p = try XCTUnwrap(graph.constants[pads]?.int32, name)
                XCTAssertEqual(p.count, 8, name)
                // Short range and mesh pad only channels; full range also pads space.
                if name != "face_detection_full_range_sparse" {
                    XCTAssertEqual(Array(p.prefix(6)), [0, 0, 0, 0, 0, 0], name)
                }
            }
        }
    }

    func testSelfieTransposeConvolutionCustomOp() throws {
        for (name, inputShape) in [("selfie_segmentation", [1, 128, 128, 16]),
                                   ("selfie_segmentation_landscape", [1, 72, 128, 16])] {
            let graph = try TFLiteGraph(model: try ModelFixtures.model(name))
            let nodes = graph.nodes.filter { $0.op.kind == Self.convTranspose }
            XCTAssertEqual(nodes.count, 1, name)
            let node = try XCTUnwrap(nodes.first)
            let raw = try XCTUnwrap(node.op.customOptions)
            XCTAssertEqual(raw.count, 12, name)
            let params = try TFLiteTransposeConvParams(rawCustomOptions: raw)
            XCTAssertEqual(params, .init(padding: .same, strideW: 2, strideH: 2), name)
            guard node.inputs.count == 3, case .runtime(let x) = node.inputs[0],
                  case .constant(let w) = node.inputs[1], case .constant(let b) = node.inputs[2] else {
                return XCTFail("\(name): unexpected operands \(node.inputs)")
            }
            XCTAssertEqual(graph.tensor(x).shape, inputShape, name)
            XCTAssertEqual(graph.constants[w]?.shape, [1, 2, 2, 16], name)
            XCTAssertEqual(graph.constants[b]?.shape, [1], name)
        }
    }

    func testStemConvolutions() throws {
        // 5x5 s2 SAME stem for the detector, 3x3 s2 SAME for the mesh.
        for (name, kernel) in [("face_detection_short_range", 5), ("face_landmark", 3)] {
            let graph = try TFLiteGraph(model: try ModelFixtures.model(name))
            let stem = try XCTUnwrap(graph.nodes.first { $0.op.builtin == .conv2D })
            guard case .conv2D(let o) = stem.op.options, case .constant(let w) = stem.inputs[1] else {
                return XCTFail("\(name): stem is not a CONV_2D with constant weights")
            }
            XCTAssertEqual(o.padding, .same)
            XCTAssertEqual([o.strideW, o.strideH], [2, 2])
            let shape = try XCTUnwrap(graph.constants[w]?.shape)
            XCTAssertEqual(Array(shape.dropFirst()), [kernel, kernel, 3], name)
        }
    }
}
