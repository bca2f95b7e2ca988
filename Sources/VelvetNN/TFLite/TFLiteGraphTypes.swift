/// What an operator computes: a builtin op, a custom op by name, or a builtin
/// code newer than this reader knows.
public enum TFLiteOpKind: Sendable, Equatable, Hashable, CustomStringConvertible {
    case builtin(TFLiteBuiltinOperator)
    case custom(String)
    case unknownBuiltin(Int32)

    public var description: String {
        switch self {
        case .builtin(let op): return op.schemaName
        case .custom(let name): return "CUSTOM \(name)"
        case .unknownBuiltin(let code): return "BUILTIN(\(code))"
        }
    }
}

/// One tensor of subgraph 0.
public struct TFLiteTensor: Sendable {
    public let index: Int
    public let name: String
    /// Dimensions, all >= 0 (NHWC for image tensors).
    public let shape: [Int]
    public let type: TFLiteTensorType
    public let bufferIndex: Int
    /// Constant bytes (little-endian), sharing the model's storage; nil for
    /// runtime tensors. For a sparse tensor these are the stored non-zeros.
    public let data: ArraySlice<UInt8>?
    public let sparsity: TFLiteSparsity?
    public let isVariable: Bool

    /// Number of elements of the (dense) shape.
    public var elementCount: Int { shape.reduce(1, *) }
    public var isConstant: Bool { data != nil }
}

/// Sparse encoding of a constant tensor (schema table SparsityParameters, a
/// TACO-style format): per traversed dimension either dense or CSR.
public struct TFLiteSparsity: Sendable, Equatable {
    public enum Format: Int8, Sendable { case dense = 0, sparseCSR = 1 }

    public struct Dimension: Sendable, Equatable {
        public var format: Format
        /// Size of a dense dimension.
        public var denseSize: Int
        /// CSR row pointers into `arrayIndices`, one per position of the previous level plus one.
        public var arraySegments: [Int]
        /// CSR coordinates within this dimension.
        public var arrayIndices: [Int]
    }

    /// Permutation of the dimensions (plus block dimensions) in storage order.
    public var traversalOrder: [Int]
    /// For each block dimension, the original dimension it subdivides.
    public var blockMap: [Int]
    /// One entry per element of `traversalOrder`.
    public var dimensions: [Dimension]
}

/// One operator of subgraph 0, in execution order.
public struct TFLiteOperator: Sendable {
    public let index: Int
    public let kind: TFLiteOpKind
    /// The operator code's version (how the op's parameters are to be read).
    public let version: Int
    /// Tensor indices; -1 marks an absent optional input.
    public let inputs: [Int]
    public let outputs: [Int]
    public let options: TFLiteOptions
    /// Raw custom options (custom ops only; format depends on the op).
    public let customOptions: [UInt8]?

    public var builtin: TFLiteBuiltinOperator? {
        if case .builtin(let op) = kind { return op }
        return nil
    }
}
