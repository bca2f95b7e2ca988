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

/// A compiled kernel: SPIR-V words plus the interface the host must match.
public struct KernelSource: Sendable {
    public let name: String
    public let spirv: [UInt32]
    public let workgroupSize: KernelWorkgroupSize
    public let bindings: [KernelBinding]
    public let pushConstantSize: Int
    /// Specialisation constant name -> constant_id.
    public let specializationConstants: [String: UInt32]

    public init(name: String, spirvBase64: String, workgroupSize: KernelWorkgroupSize, bindings: [KernelBinding],
                pushConstantSize: Int, specializationConstants: [String: UInt32]) {
        self.name = name
        let bytes = Data(base64Encoded: spirvBase64) ?? Data()
        self.spirv = bytes.withUnsafeBytes { raw in
            (0..<(raw.count / 4)).map { UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self)) }
        }
        self.workgroupSize = workgroupSize
        self.bindings = bindings
        self.pushConstantSize = pushConstantSize
        self.specializationConstants = specializationConstants
    }
}
