import Foundation

/// Every GLSL kernel in this folder is compiled to SPIR-V at build time by KernelPlugin,
/// which adds a `KernelLibrary.<name>` constant per `.comp` file (see the generated
/// `*.spirv.swift`). Nothing here touches Vulkan: VelvetGPU turns a source into a pipeline.
public enum KernelLibrary {}

public struct KernelWorkgroupSize: Sendable, Equatable {
    public var x: UInt32, y: UInt32, z: UInt32
    public init(x: UInt32, y: UInt32, z: UInt32) { (self.x, self.y, self.z) = (x, y, z) }
}

public enum KernelBindingKind: String, Sendable {
    case storageImage, sampledImage, combinedImageSampler, sampler, uniformBuffer, storageBuffer
    case uniformTexelBuffer, storageTexelBuffer
}

/// One descriptor a kernel declares, as reflected from its SPIR-V.
public struct KernelBinding: Sendable, Equatable {
    public var set: UInt32, binding: UInt32, kind: KernelBindingKind, count: UInt32, name: String
    public init(set: UInt32, binding: UInt32, kind: KernelBindingKind, count: UInt32, name: String) {
        (self.set, self.binding, self.kind, self.count, self.name) = (set, binding, kind, count, name)
    }
}

/// One member of a kernel's push-constant block, as reflected from its SPIR-V: `components`
/// 32-bit scalars (1, or 2...4 for a vector) from byte `offset`.
public struct KernelPushMember: Sendable, Equatable {
    public enum Scalar: Sendable { case int32, uint32, float }
    public var name: String, scalar: Scalar, components: Int, offset: Int
    public init(name: String, scalar: Scalar, components: Int, offset: Int) {
        (self.name, self.scalar, self.components, self.offset) = (name, scalar, components, offset)
    }
}

/// A kernel's push-constant block as a Swift value, generated per kernel from its SPIR-V
/// (`KernelLibrary.<Name>Push`): one stored property per GLSL member, named as in GLSL, so a
/// block is filled by name and a renamed, retyped or removed member is a compile error.
public protocol KernelPushBlock: Sendable {
    /// The kernel whose block this is.
    static var kernel: KernelSource { get }
    /// The block's size in bytes, as reflected.
    static var size: Int { get }
    /// Writes every member at its reflected offset into `bytes` (at least `size` bytes).
    func write(to bytes: UnsafeMutableRawBufferPointer)
}

/// A compiled kernel: SPIR-V words plus the interface the host must match.
public struct KernelSource: Sendable {
    public let name: String
    public let spirv: [UInt32]
    public let workgroupSize: KernelWorkgroupSize
    public let bindings: [KernelBinding]
    public let pushConstantSize: Int
    /// The push-constant block's members in declaration order (empty without a block).
    public let pushConstantMembers: [KernelPushMember]
    /// Specialisation constant name -> constant_id.
    public let specializationConstants: [String: UInt32]

    public init(name: String, spirvBase64: String, workgroupSize: KernelWorkgroupSize, bindings: [KernelBinding],
                pushConstantSize: Int, pushConstantMembers: [KernelPushMember], specializationConstants: [String: UInt32]) {
        self.name = name
        let bytes = Data(base64Encoded: spirvBase64) ?? Data()
        self.spirv = bytes.withUnsafeBytes { raw in
            (0..<(raw.count / 4)).map { UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self)) }
        }
        self.workgroupSize = workgroupSize
        self.bindings = bindings
        self.pushConstantSize = pushConstantSize
        self.pushConstantMembers = pushConstantMembers
        self.specializationConstants = specializationConstants
    }
}
