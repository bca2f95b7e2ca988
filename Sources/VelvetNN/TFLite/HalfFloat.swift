/// IEEE 754 binary16 -> binary32 conversion, done in software so it behaves
/// the same on every platform (no dependence on Float16 availability).
public enum HalfFloat {
    /// Exact conversion of one half-precision bit pattern, including
    /// subnormals, infinities and NaNs (payload kept, so NaNs stay NaN).
    public static func float(fromBits half: UInt16) -> Float {
        let sign: UInt32 = UInt32(half & 0x8000) << 16
        let exponent = Int((half >> 10) & 0x1F)
        let mantissa = UInt32(half & 0x03FF)
        switch exponent {
        case 0:
            // Zero or subnormal: mantissa * 2^-24, exact in binary32.
            let magnitude = Float(mantissa) * 0x1p-24
            return sign == 0 ? magnitude : -magnitude
        case 0x1F:
            return Float(bitPattern: sign | 0x7F80_0000 | (mantissa << 13))
        default:
            // Rebias the exponent from 15 to 127 and widen the mantissa.
            let bits = sign | (UInt32(exponent + 112) << 23) | (mantissa << 13)
            return Float(bitPattern: bits)
        }
    }

    /// Converts little-endian half-precision values; a trailing odd byte is ignored.
    public static func floats(fromLittleEndian bytes: ArraySlice<UInt8>) -> [Float] {
        let count = bytes.count / 2
        return bytes.withUnsafeBytes { raw in
            [Float](unsafeUninitializedCapacity: count) { out, initialized in
                for i in 0..<count {
                    let bits = UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self))
                    out[i] = float(fromBits: bits)
                }
                initialized = count
            }
        }
    }

    public static func floats(fromLittleEndian bytes: [UInt8]) -> [Float] {
        floats(fromLittleEndian: bytes[...])
    }
}
