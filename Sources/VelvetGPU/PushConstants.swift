/// Packs push-constant values with GLSL's std430 alignment (scalars 4, vec2 8, vec4 16),
/// so the bytes match the kernel's `layout(push_constant)` block field by field.
public struct PushConstants: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public mutating func int(_ value: Int32) { append(UInt32(bitPattern: value), alignment: 4) }
    public mutating func uint(_ value: UInt32) { append(value, alignment: 4) }
    public mutating func float(_ value: Float) { append(value.bitPattern, alignment: 4) }
    public mutating func ivec2(_ x: Int32, _ y: Int32) { align(8); int(x); int(y) }
    public mutating func vec2(_ x: Float, _ y: Float) { align(8); float(x); float(y) }
    public mutating func vec4(_ x: Float, _ y: Float, _ z: Float, _ w: Float) { align(16); float(x); float(y); float(z); float(w) }

    private mutating func align(_ alignment: Int) {
        while bytes.count % alignment != 0 { bytes.append(0) }
    }

    private mutating func append(_ word: UInt32, alignment: Int) {
        align(alignment)
        withUnsafeBytes(of: word.littleEndian) { bytes.append(contentsOf: $0) }
    }
}
