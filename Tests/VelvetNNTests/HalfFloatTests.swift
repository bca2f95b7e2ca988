import XCTest
import VelvetNN

final class HalfFloatTests: XCTestCase {
    func testKnownBitPatterns() {
        let cases: [(UInt16, Float)] = [
            (0x0000, 0), (0x3C00, 1), (0xBC00, -1), (0x4000, 2), (0x3800, 0.5),
            (0x3555, 0.333251953125), (0x4248, 3.140625), (0x7BFF, 65504), (0xFBFF, -65504),
            (0x0400, 0x1p-14),                    // smallest normal
            (0x03FF, 0x1.ff8p-15),                // largest subnormal
            (0x0001, 0x1p-24),                    // smallest subnormal
            (0x8001, -0x1p-24),
            (0x0200, 0x1p-15),
            (0x7C00, .infinity), (0xFC00, -.infinity),
        ]
        for (bits, expected) in cases {
            let value = HalfFloat.float(fromBits: bits)
            XCTAssertEqual(value.bitPattern, expected.bitPattern,
                           "0x\(String(bits, radix: 16)) gave \(value), expected \(expected)")
        }
    }

    func testSignedZeroAndNaN() {
        let negativeZero = HalfFloat.float(fromBits: 0x8000)
        XCTAssertEqual(negativeZero, 0)
        XCTAssertEqual(negativeZero.sign, .minus)
        for bits: UInt16 in [0x7E00, 0x7C01, 0xFE00, 0x7FFF] {
            XCTAssertTrue(HalfFloat.float(fromBits: bits).isNaN, String(bits, radix: 16))
        }
        XCTAssertEqual(HalfFloat.float(fromBits: 0xFE00).sign, .minus)
    }

    /// All 63,488 finite halves: increasing in bit order, symmetric in sign,
    /// and exact (an independent decomposition gives back the same bits).
    func testAllFiniteValuesAreExactAndMonotonic() {
        var previous = -Float.infinity
        for bits: UInt16 in 0x0000...0x7BFF {
            let value = HalfFloat.float(fromBits: bits)
            XCTAssertGreaterThan(value, previous)
            XCTAssertEqual(HalfFloat.float(fromBits: bits | 0x8000), -value)
            XCTAssertEqual(Self.halfBits(value), bits)
            previous = value
        }
    }

    func testLittleEndianBulkConversion() {
        let bytes: [UInt8] = [0x00, 0x3C, 0x00, 0xC0, 0x01, 0x00, 0xFF]  // 1, -2, 2^-24, trailing odd byte
        XCTAssertEqual(HalfFloat.floats(fromLittleEndian: bytes), [1, -2, 0x1p-24])
        XCTAssertEqual(HalfFloat.floats(fromLittleEndian: bytes[2..<4]), [-2])
    }

    /// Independent reference: decompose a float that is exactly representable as a half.
    private static func halfBits(_ value: Float) -> UInt16 {
        if value == 0 { return 0 }
        let exponent = Int(value.exponent)
        if exponent < -14 {
            return UInt16(value / 0x1p-24)  // subnormal: integer multiple of 2^-24
        }
        let mantissa = UInt16((value / Float(sign: .plus, exponent: exponent, significand: 1) - 1) * 1024)
        return UInt16(exponent + 15) << 10 | mantissa
    }
}
