/// Element type of a tensor (schema enum TensorType).
public enum TFLiteTensorType: Int8, Sendable, CaseIterable {
    case float32 = 0
    case float16 = 1
    case int32 = 2
    case uint8 = 3
    case int64 = 4
    case string = 5
    case bool = 6
    case int16 = 7
    case complex64 = 8
    case int8 = 9
    case float64 = 10
    case complex128 = 11
    case uint64 = 12
    case resource = 13
    case variant = 14
    case uint32 = 15
    case uint16 = 16
    case int4 = 17
    case bfloat16 = 18

    /// Bytes per element, or nil where elements have no fixed whole-byte size
    /// (strings, resources, variants, packed int4).
    public var byteSize: Int? {
        switch self {
        case .bool, .int8, .uint8: return 1
        case .float16, .bfloat16, .int16, .uint16: return 2
        case .float32, .int32, .uint32: return 4
        case .float64, .int64, .uint64, .complex64: return 8
        case .complex128: return 16
        case .string, .resource, .variant, .int4: return nil
        }
    }
}

/// Convolution / pooling padding (schema enum Padding).
public enum TFLitePadding: Int8, Sendable {
    case same = 0
    case valid = 1
}

/// Activation fused into an op (schema enum ActivationFunctionType).
public enum TFLiteActivation: Int8, Sendable {
    case none = 0
    case relu = 1
    case reluN1To1 = 2
    case relu6 = 3
    case tanh = 4
    case signBit = 5
}
