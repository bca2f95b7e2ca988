/// A constant tensor after load-time folding.
public struct TFLiteConstant: Sendable {
    public enum Values: Sendable, Equatable {
        case float32([Float])
        case int32([Int32])
        case int64([Int64])
        /// Any other element type, as little-endian bytes.
        case raw(TFLiteTensorType, [UInt8])
    }

    public let tensorIndex: Int
    public let name: String
    public let shape: [Int]
    public let values: Values

    public var float32: [Float]? {
        if case .float32(let v) = values { return v }
        return nil
    }

    public var int32: [Int32]? {
        if case .int32(let v) = values { return v }
        return nil
    }
}

/// Subgraph 0 ready for execution: DENSIFY and DEQUANTIZE of constants are
/// folded away at load, and every remaining operator input is resolved to a
/// runtime tensor, a constant, or absent.
public struct TFLiteGraph: Sendable {
    public enum Operand: Sendable, Equatable {
        case absent
        /// A tensor computed at run time (a graph input or an operator output).
        case runtime(Int)
        /// A constant; look it up in `constants` by this tensor index.
        case constant(Int)
    }

    public struct Node: Sendable {
        public let op: TFLiteOperator
        public let inputs: [Operand]
        /// Output tensor indices (-1 = absent optional output).
        public let outputs: [Int]
    }

    public let model: TFLiteModel
    /// The operators left to run, in execution order.
    public let nodes: [Node]
    /// Constants referenced by `nodes` (or graph outputs), by tensor index.
    public let constants: [Int: TFLiteConstant]
    /// How many DENSIFY / DEQUANTIZE operators were folded into constants.
    public let foldedOperatorCount: Int

    public var inputs: [Int] { model.inputs }
    public var outputs: [Int] { model.outputs }

    public init(model: TFLiteModel) throws(TFLiteError) {
        do {
            var folder = ConstantFolder(model: model)
            try folder.run()
            self.model = model
            nodes = folder.nodes
            constants = folder.used
            foldedOperatorCount = folder.foldedCount
        } catch {
            throw error.at(path: model.path)
        }
    }

    /// A float32 constant (for example a dequantized float16 weight), by tensor index.
    public func constantFloat32(_ tensorIndex: Int) -> [Float]? {
        constants[tensorIndex]?.float32
    }

    public func tensor(_ index: Int) -> TFLiteTensor { model.tensors[index] }

    /// How many nodes of each kind remain after folding.
    public var nodeCounts: [TFLiteOpKind: Int] {
        nodes.reduce(into: [:]) { $0[$1.op.kind, default: 0] += 1 }
    }
}
