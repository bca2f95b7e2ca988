/// Bounds-checked reading of a FlatBuffer (little-endian) from untrusted bytes.
///
/// Every offset, length and index is checked before use and a failure throws
/// `TFLiteError` instead of trapping. FlatBuffer offsets (`uoffset`) are
/// unsigned and always point forward, so following them cannot loop; the
/// schema-directed parser above this bounds the depth. Vector counts are
/// checked against the bytes that remain, so a forged count cannot make the
/// reader allocate more than the file's size.
public struct FlatBufferReader: Sendable {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    public var count: Int { bytes.count }

    /// Throws unless `length` bytes starting at `position` are inside the buffer.
    func require(_ position: Int, _ length: Int, _ what: @autoclosure () -> String) throws(TFLiteError) {
        guard position >= 0, length >= 0, position <= bytes.count, length <= bytes.count - position else {
            throw .truncated("\(what()) at offset \(position) (\(length) bytes) extends past end (size \(bytes.count))")
        }
    }

    /// A little-endian integer at `position`.
    public func scalar<T: FixedWidthInteger>(_: T.Type = T.self, at position: Int) throws(TFLiteError) -> T {
        let size = MemoryLayout<T>.size
        try require(position, size, "\(T.self) value")
        return unsafeScalar(at: position)
    }

    /// Caller has checked the range.
    @inline(__always)
    func unsafeScalar<T: FixedWidthInteger>(at position: Int) -> T {
        var value: T.Magnitude = 0
        for k in 0..<MemoryLayout<T>.size {
            value |= T.Magnitude(bytes[position + k]) << (8 * k)
        }
        return T(truncatingIfNeeded: value)
    }

    /// The 4-byte file identifier after the root offset, if the buffer is long enough.
    public var fileIdentifier: String? {
        guard bytes.count >= 8 else { return nil }
        return String(decoding: bytes[4..<8], as: UTF8.self)
    }

    /// The root table, whose offset is the buffer's first 4 bytes.
    public func rootTable() throws(TFLiteError) -> FlatTable {
        let rootOffset: UInt32 = try scalar(at: 0)
        return try table(at: Int(rootOffset), what: "root table")
    }

    /// Follows the `uoffset` stored at `position` (target = position + value).
    func followOffset(at position: Int, what: String) throws(TFLiteError) -> Int {
        let offset: UInt32 = try scalar(at: position)
        let target = position + Int(offset)
        try require(target, 0, what)
        return target
    }

    /// The table starting at `position`, with its vtable checked.
    func table(at position: Int, what: String) throws(TFLiteError) -> FlatTable {
        try require(position, 4, what)
        let vtableDelta: Int32 = unsafeScalar(at: position)
        let vtable = position - Int(vtableDelta)
        try require(vtable, 4, "vtable of \(what)")
        let vtableSize = Int(unsafeScalar(at: vtable) as UInt16)
        let inlineSize = Int(unsafeScalar(at: vtable + 2) as UInt16)
        guard vtableSize >= 4, vtableSize % 2 == 0 else {
            throw .malformed("vtable of \(what) at offset \(vtable) has invalid size \(vtableSize)")
        }
        guard inlineSize >= 4 else {
            throw .malformed("\(what) at offset \(position) has invalid inline size \(inlineSize)")
        }
        try require(vtable, vtableSize, "vtable of \(what)")
        try require(position, inlineSize, what)
        return FlatTable(reader: self, position: position, vtable: vtable,
                         vtableSize: vtableSize, inlineSize: inlineSize, what: what)
    }

    /// The vector starting at `position` (a 4-byte count, then the elements).
    func vector(at position: Int, elementSize: Int, what: String) throws(TFLiteError) -> FlatVector {
        let count: UInt32 = try scalar(at: position)
        let start = position + 4
        let available = bytes.count - start
        // Compare before multiplying so a forged count cannot overflow.
        guard Int(count) <= available / elementSize else {
            throw .truncated("\(what) at offset \(position) claims \(count) elements of \(elementSize) bytes, past end (size \(bytes.count))")
        }
        return FlatVector(reader: self, start: start, count: Int(count), elementSize: elementSize, what: what)
    }
}

/// A table: a position plus its vtable, which maps field ids to inline offsets.
public struct FlatTable: Sendable {
    public let reader: FlatBufferReader
    public let position: Int
    let vtable: Int
    let vtableSize: Int
    let inlineSize: Int
    /// Describes the table in error messages ("tensor 3", "operator 12").
    public let what: String

    /// Inline position of field `id` with `size` bytes, or nil when absent.
    func fieldPosition(_ id: Int, size: Int) throws(TFLiteError) -> Int? {
        let slot = 4 + 2 * id
        guard slot + 2 <= vtableSize else { return nil }
        let offset = Int(reader.unsafeScalar(at: vtable + slot) as UInt16)
        guard offset != 0 else { return nil }
        guard offset + size <= inlineSize else {
            throw .malformed("field \(id) of \(what) at offset \(position) lies outside the table (\(offset)+\(size) > \(inlineSize))")
        }
        return position + offset
    }

    public func has(_ id: Int) throws(TFLiteError) -> Bool {
        try fieldPosition(id, size: 1) != nil
    }

    /// A scalar field, or `defaultValue` when absent.
    public func scalar<T: FixedWidthInteger>(_ id: Int, default defaultValue: T) throws(TFLiteError) -> T {
        guard let p = try fieldPosition(id, size: MemoryLayout<T>.size) else { return defaultValue }
        return reader.unsafeScalar(at: p)
    }

    public func bool(_ id: Int, default defaultValue: Bool = false) throws(TFLiteError) -> Bool {
        try scalar(id, default: UInt8(defaultValue ? 1 : 0)) != 0
    }

    /// The sub-table referenced by field `id`, or nil when absent.
    public func table(_ id: Int, what: String) throws(TFLiteError) -> FlatTable? {
        guard let p = try fieldPosition(id, size: 4) else { return nil }
        let target = try reader.followOffset(at: p, what: what)
        return try reader.table(at: target, what: what)
    }

    /// The vector referenced by field `id`, or nil when absent.
    public func vector(_ id: Int, elementSize: Int, what: String) throws(TFLiteError) -> FlatVector? {
        guard let p = try fieldPosition(id, size: 4) else { return nil }
        let target = try reader.followOffset(at: p, what: what)
        return try reader.vector(at: target, elementSize: elementSize, what: what)
    }

    /// The string referenced by field `id`, or nil when absent. Invalid UTF-8 is repaired, not fatal.
    public func string(_ id: Int, what: String) throws(TFLiteError) -> String? {
        guard let v = try vector(id, elementSize: 1, what: what) else { return nil }
        return String(decoding: v.bytes, as: UTF8.self)
    }

    /// A vector of 32-bit integers as `[Int]` (empty when absent).
    public func intVector(_ id: Int, what: String) throws(TFLiteError) -> [Int] {
        guard let v = try vector(id, elementSize: 4, what: what) else { return [] }
        return v.int32s.map(Int.init)
    }

    /// A union: the type byte at field `id`, the value table at field `id + 1`.
    /// Returns nil for type NONE (0) or a missing value.
    public func union(_ id: Int, what: String) throws(TFLiteError) -> (type: UInt8, table: FlatTable)? {
        let type: UInt8 = try scalar(id, default: 0)
        guard type != 0 else { return nil }
        guard let value = try table(id + 1, what: what) else {
            throw .malformed("\(what) has union type \(type) but no value")
        }
        return (type, value)
    }
}

/// A vector whose bounds (count * element size) were checked on creation.
public struct FlatVector: Sendable {
    public let reader: FlatBufferReader
    /// Position of the first element.
    public let start: Int
    public let count: Int
    public let elementSize: Int
    let what: String

    public var isEmpty: Bool { count == 0 }

    /// The element bytes, sharing the model's storage.
    public var bytes: ArraySlice<UInt8> {
        reader.bytes[start..<(start + count * elementSize)]
    }

    func checkIndex(_ index: Int) throws(TFLiteError) {
        guard index >= 0, index < count else {
            throw .malformed("index \(index) out of range for \(what) with \(count) elements")
        }
    }

    /// Element `index` of a scalar vector.
    public func scalar<T: FixedWidthInteger>(_: T.Type = T.self, at index: Int) throws(TFLiteError) -> T {
        try checkIndex(index)
        precondition(MemoryLayout<T>.size == elementSize, "vector element size mismatch")
        return reader.unsafeScalar(at: start + index * elementSize)
    }

    /// Element `index` of a vector of tables.
    public func table(at index: Int, what: String) throws(TFLiteError) -> FlatTable {
        try checkIndex(index)
        let target = try reader.followOffset(at: start + index * 4, what: what)
        return try reader.table(at: target, what: what)
    }

    /// All elements as little-endian `T`s; the element size must be `T`'s size.
    public func elements<T: FixedWidthInteger>(_: T.Type = T.self) -> [T] {
        precondition(MemoryLayout<T>.size == elementSize, "vector element size mismatch")
        return bytes.withUnsafeBytes { raw in
            (0..<count).map { T(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * elementSize, as: T.self)) }
        }
    }

    /// All elements of a vector of 32-bit integers.
    public var int32s: [Int32] { elements(Int32.self) }
}
