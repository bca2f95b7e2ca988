import VelvetKernels

/// A compute kernel with a push-constant block, tied to the block's generated struct
/// (`KernelLibrary.<Name>Push`): it is built from `Push.kernel`, and `CommandRecorder.dispatch`
/// takes only a `Push` for it, so filling another kernel's block does not compile.
public struct TypedKernel<Push: KernelPushBlock>: Sendable {
    public let compute: ComputeKernel

    public init(context: GPUContext, specialization: [String: SpecializationValue] = [:]) throws {
        precondition(Push.size == Push.kernel.pushConstantSize,
                     "\(Push.self) is \(Push.size) B, \(Push.kernel.name)'s block \(Push.kernel.pushConstantSize) B")
        compute = try ComputeKernel(context: context, source: Push.kernel, specialization: specialization)
    }

    /// A kernel built elsewhere (a cache of specialised pipelines) from `Push.kernel`.
    public init(wrapping compute: ComputeKernel) {
        precondition(compute.source.name == Push.kernel.name, "\(Push.self) is not \(compute.source.name)'s push block")
        self.compute = compute
    }

    public var source: KernelSource { compute.source }

    /// The block's bytes, every member at its reflected offset.
    func bytes(of push: Push) -> [UInt8] {
        precondition(Push.size == compute.source.pushConstantSize,
                     "\(compute.source.name): a \(Push.size) B \(Push.self) for a \(compute.source.pushConstantSize) B block")
        var bytes = [UInt8](repeating: 0, count: (Push.size + 3) / 4 * 4)
        bytes.withUnsafeMutableBytes { push.write(to: $0) }
        return bytes
    }
}
