import Foundation

/// The graph VelvetNN plans: runtime tensors with shapes, float/int constants, and
/// operators in execution order. Built from a `TFLiteGraph` (constants already
/// folded) or by hand, e.g. for single-op tests.
public struct NNGraph: Sendable {
    public struct Tensor: Sendable, Equatable {
        public var name: String
        public var shape: [Int]

        public init(name: String, shape: [Int]) {
            self.name = name
            self.shape = shape
        }
    }

    public enum Constant: Sendable, Equatable {
        case float([Float])
        case int([Int])

        public var floats: [Float]? {
            if case .float(let values) = self { return values }
            return nil
        }

        public var ints: [Int]? {
            if case .int(let values) = self { return values }
            return nil
        }
    }

    public struct Node: Sendable {
        public var kind: TFLiteOpKind
        public var options: TFLiteOptions
        public var customOptions: [UInt8]?
        /// Tensor indices; -1 marks an absent optional input.
        public var inputs: [Int]
        public var outputs: [Int]

        public init(kind: TFLiteOpKind, options: TFLiteOptions = .none, customOptions: [UInt8]? = nil,
                    inputs: [Int], outputs: [Int]) {
            self.kind = kind
            self.options = options
            self.customOptions = customOptions
            self.inputs = inputs
            self.outputs = outputs
        }

        public var builtin: TFLiteBuiltinOperator? {
            if case .builtin(let op) = kind { return op }
            return nil
        }
    }

    public var tensors: [Tensor]
    /// Constant values by tensor index; every other tensor is computed at run time.
    public var constants: [Int: Constant]
    public var nodes: [Node]
    public var inputs: [Int]
    public var outputs: [Int]

    public init(tensors: [Tensor], constants: [Int: Constant], nodes: [Node], inputs: [Int], outputs: [Int]) {
        self.tensors = tensors
        self.constants = constants
        self.nodes = nodes
        self.inputs = inputs
        self.outputs = outputs
    }

    /// The TFLite graph's runtime part. Float32 and integer constants are kept; other
    /// constant types are left out (an operator needing one fails at planning).
    public init(_ graph: TFLiteGraph) {
        tensors = graph.model.tensors.map { Tensor(name: $0.name, shape: $0.shape) }
        var constants: [Int: Constant] = [:]
        for (index, constant) in graph.constants {
            switch constant.values {
            case .float32(let values): constants[index] = .float(values)
            case .int32(let values): constants[index] = .int(values.map(Int.init))
            case .int64(let values): constants[index] = .int(values.map(Int.init))
            case .raw: continue
            }
        }
        self.constants = constants
        nodes = graph.nodes.map { node in
            Node(kind: node.op.kind, options: node.op.options, customOptions: node.op.customOptions,
                 inputs: node.op.inputs, outputs: node.op.outputs)
        }
        inputs = graph.inputs
        outputs = graph.outputs
    }

    /// Loads and folds a .tflite file.
    public init(contentsOf url: URL) throws {
        self.init(try TFLiteGraph(model: try TFLiteModel(contentsOf: url)))
    }

    /// "operator 12 (CONV_2D)".
    func label(_ nodeIndex: Int) -> String {
        "operator \(nodeIndex) (\(nodes[nodeIndex].kind))"
    }

    /// "tensor 7 'conv2d_3'".
    func name(_ tensor: Int) -> String {
        let name = tensors[tensor].name
        return name.isEmpty ? "tensor \(tensor)" : "tensor \(tensor) '\(name)'"
    }
}
