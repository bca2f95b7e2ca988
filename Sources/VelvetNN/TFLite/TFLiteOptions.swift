/// An operator's builtin options (schema union BuiltinOptions), decoded for
/// the ops Velvet runs. Other option tables are kept as `.other(unionType)`.
public enum TFLiteOptions: Sendable, Equatable {
    case none
    case conv2D(Conv2D)
    case depthwiseConv2D(DepthwiseConv2D)
    case pool2D(Pool2D)
    case add(activation: TFLiteActivation)
    case sub(activation: TFLiteActivation)
    case mul(activation: TFLiteActivation)
    case div(activation: TFLiteActivation)
    case concatenation(axis: Int, activation: TFLiteActivation)
    case reshape(newShape: [Int])
    case resizeBilinear(Resize)
    case resizeNearestNeighbor(Resize)
    case depthToSpace(blockSize: Int)
    case spaceToDepth(blockSize: Int)
    /// MEAN, SUM, REDUCE_MAX and friends.
    case reducer(keepDims: Bool)
    case transposeConv(TransposeConv)
    case softmax(beta: Float)
    case leakyRelu(alpha: Float)
    /// A union member this reader does not decode; the value is its union type code.
    case other(unionType: UInt8)

    public struct Conv2D: Sendable, Equatable {
        public var padding: TFLitePadding
        public var strideW: Int
        public var strideH: Int
        public var activation: TFLiteActivation
        public var dilationW: Int
        public var dilationH: Int

        public init(padding: TFLitePadding, strideW: Int, strideH: Int, activation: TFLiteActivation, dilationW: Int, dilationH: Int) {
            self.padding = padding
            self.strideW = strideW
            self.strideH = strideH
            self.activation = activation
            self.dilationW = dilationW
            self.dilationH = dilationH
        }
    }

    public struct DepthwiseConv2D: Sendable, Equatable {
        public var padding: TFLitePadding
        public var strideW: Int
        public var strideH: Int
        public var depthMultiplier: Int
        public var activation: TFLiteActivation
        public var dilationW: Int
        public var dilationH: Int

        public init(padding: TFLitePadding, strideW: Int, strideH: Int, depthMultiplier: Int, activation: TFLiteActivation, dilationW: Int, dilationH: Int) {
            self.padding = padding
            self.strideW = strideW
            self.strideH = strideH
            self.depthMultiplier = depthMultiplier
            self.activation = activation
            self.dilationW = dilationW
            self.dilationH = dilationH
        }
    }

    public struct Pool2D: Sendable, Equatable {
        public var padding: TFLitePadding
        public var strideW: Int
        public var strideH: Int
        public var filterW: Int
        public var filterH: Int
        public var activation: TFLiteActivation

        public init(padding: TFLitePadding, strideW: Int, strideH: Int, filterW: Int, filterH: Int, activation: TFLiteActivation) {
            self.padding = padding
            self.strideW = strideW
            self.strideH = strideH
            self.filterW = filterW
            self.filterH = filterH
            self.activation = activation
        }
    }

    public struct Resize: Sendable, Equatable {
        public var alignCorners: Bool
        public var halfPixelCenters: Bool

        public init(alignCorners: Bool, halfPixelCenters: Bool) {
            self.alignCorners = alignCorners
            self.halfPixelCenters = halfPixelCenters
        }
    }

    public struct TransposeConv: Sendable, Equatable {
        public var padding: TFLitePadding
        public var strideW: Int
        public var strideH: Int
        public var activation: TFLiteActivation

        public init(padding: TFLitePadding, strideW: Int, strideH: Int, activation: TFLiteActivation) {
            self.padding = padding
            self.strideW = strideW
            self.strideH = strideH
            self.activation = activation
        }
    }

    /// The fused activation, where the options carry one.
    public var activation: TFLiteActivation? {
        switch self {
        case .conv2D(let o): return o.activation
        case .depthwiseConv2D(let o): return o.activation
        case .pool2D(let o): return o.activation
        case .transposeConv(let o): return o.activation
        case .add(let a), .sub(let a), .mul(let a), .div(let a): return a
        case .concatenation(_, let a): return a
        default: return nil
        }
    }
}

/// Decodes an option table according to its BuiltinOptions union type code.
enum TFLiteOptionsDecoder {
    static func decode(type: UInt8, table t: FlatTable) throws(TFLiteError) -> TFLiteOptions {
        switch type {
        case 1:
            return .conv2D(.init(
                padding: try padding(t, 0), strideW: try int(t, 1), strideH: try int(t, 2),
                activation: try activation(t, 3),
                dilationW: try int(t, 4, default: 1), dilationH: try int(t, 5, default: 1)))
        case 2:
            return .depthwiseConv2D(.init(
                padding: try padding(t, 0), strideW: try int(t, 1), strideH: try int(t, 2),
                depthMultiplier: try int(t, 3), activation: try activation(t, 4),
                dilationW: try int(t, 5, default: 1), dilationH: try int(t, 6, default: 1)))
        case 5:
            return .pool2D(.init(
                padding: try padding(t, 0), strideW: try int(t, 1), strideH: try int(t, 2),
                filterW: try int(t, 3), filterH: try int(t, 4), activation: try activation(t, 5)))
        case 9: return .softmax(beta: try float(t, 0))
        case 10: return .concatenation(axis: try int(t, 0), activation: try activation(t, 1))
        case 11: return .add(activation: try activation(t, 0))
        case 15, 74:
            // new_height/new_width (fields 0, 1) are deprecated in ResizeBilinearOptions.
            let alignField = type == 15 ? 2 : 0
            let resize = TFLiteOptions.Resize(alignCorners: try t.bool(alignField),
                                              halfPixelCenters: try t.bool(alignField + 1))
            return type == 15 ? .resizeBilinear(resize) : .resizeNearestNeighbor(resize)
        case 17: return .reshape(newShape: try t.intVector(0, what: "reshape new_shape"))
        case 19: return .spaceToDepth(blockSize: try int(t, 0))
        case 21: return .mul(activation: try activation(t, 0))
        case 27: return .reducer(keepDims: try t.bool(0))
        case 28: return .sub(activation: try activation(t, 0))
        case 29: return .div(activation: try activation(t, 0))
        case 49:
            return .transposeConv(.init(
                padding: try padding(t, 0), strideW: try int(t, 1), strideH: try int(t, 2),
                activation: try activation(t, 3)))
        case 75: return .leakyRelu(alpha: try float(t, 0))
        case 94: return .depthToSpace(blockSize: try int(t, 0))
        default: return .other(unionType: type)
        }
    }

    private static func int(_ t: FlatTable, _ id: Int, default d: Int32 = 0) throws(TFLiteError) -> Int {
        Int(try t.scalar(id, default: d))
    }

    private static func float(_ t: FlatTable, _ id: Int) throws(TFLiteError) -> Float {
        Float(bitPattern: try t.scalar(id, default: UInt32(0)))
    }

    private static func padding(_ t: FlatTable, _ id: Int) throws(TFLiteError) -> TFLitePadding {
        let raw: Int8 = try t.scalar(id, default: 0)
        guard let p = TFLitePadding(rawValue: raw) else {
            throw .malformed("\(t.what) has unknown padding \(raw)")
        }
        return p
    }

    private static func activation(_ t: FlatTable, _ id: Int) throws(TFLiteError) -> TFLiteActivation {
        let raw: Int8 = try t.scalar(id, default: 0)
        guard let a = TFLiteActivation(rawValue: raw) else {
            throw .malformed("\(t.what) has unknown fused activation \(raw)")
        }
        return a
    }
}

/// MediaPipe's TfLiteTransposeConvParams, stored raw (12 bytes, three
/// little-endian int32) as the custom options of Convolution2DTransposeBias.
public struct TFLiteTransposeConvParams: Sendable, Equatable {
    public var padding: TFLitePadding
    public var strideW: Int
    public var strideH: Int

    public init(padding: TFLitePadding, strideW: Int, strideH: Int) {
        self.padding = padding
        self.strideW = strideW
        self.strideH = strideH
    }

    /// Parses the raw C struct. Its padding uses the C enum TfLitePadding
    /// (1 = SAME, 2 = VALID), not the schema's Padding.
    public init(rawCustomOptions bytes: [UInt8]) throws(TFLiteError) {
        guard bytes.count >= 12 else {
            throw .malformed("Convolution2DTransposeBias options are \(bytes.count) bytes, expected 12")
        }
        let reader = FlatBufferReader(bytes: bytes)
        let paddingCode: Int32 = reader.unsafeScalar(at: 0)
        switch paddingCode {
        case 1: padding = .same
        case 2: padding = .valid
        default: throw .malformed("Convolution2DTransposeBias has unknown padding \(paddingCode)")
        }
        strideW = Int(reader.unsafeScalar(at: 4) as Int32)
        strideH = Int(reader.unsafeScalar(at: 8) as Int32)
        guard strideW > 0, strideH > 0 else {
            throw .malformed("Convolution2DTransposeBias has non-positive stride \(strideW)x\(strideH)")
        }
    }
}
