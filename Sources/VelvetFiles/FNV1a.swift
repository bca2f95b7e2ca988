import Foundation

/// 64-bit FNV-1a: a fast, stable hash for telling contents and settings apart (not for
/// security). Stable across runs and machines, unlike Swift's `Hasher`.
public struct FNV1a: Sendable {
    public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    public init() {}

    public mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        for byte in bytes { value = (value ^ UInt64(byte)) &* 0x100_0000_01b3 }
    }

    public mutating func update(_ text: String) { update(text.utf8) }

    public mutating func update(_ data: Data) { data.withUnsafeBytes { update($0) } }

    /// 16 lower-case hex digits.
    public var hex: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    public static func hex(_ text: String) -> String {
        var hash = FNV1a()
        hash.update(text)
        return hash.hex
    }
}
