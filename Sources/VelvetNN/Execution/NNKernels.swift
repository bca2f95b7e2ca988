import Foundation
import VelvetGPU
import VelvetKernels

/// The compute pipelines VelvetNN uses, built on first use and shared: one per kernel
/// and specialisation (kernel size, output groups per invocation). Share one instance
/// between models on a context so each pipeline is compiled once.
public final class NNKernels: @unchecked Sendable {
    public let context: GPUContext
    private var pipelines: [String: ComputeKernel] = [:]
    private let lock = NSLock()

    public init(context: GPUContext) {
        self.context = context
    }

    /// How many pipelines have been built so far.
    public var pipelineCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return pipelines.count
    }

    /// The kernel whose push block is `Push`, with `specialization`.
    func kernel<Push>(_ push: Push.Type, _ specialization: [String: Int32] = [:]) throws -> TypedKernel<Push> {
        TypedKernel(wrapping: try kernel(Push.kernel, specialization))
    }

    private func kernel(_ source: KernelSource, _ specialization: [String: Int32]) throws -> ComputeKernel {
        let key = source.name + specialization.sorted { $0.key < $1.key }.map { "|\($0.key)=\($0.value)" }.joined()
        lock.lock()
        defer { lock.unlock() }
        if let kernel = pipelines[key] { return kernel }
        let kernel = try ComputeKernel(context: context, source: source,
                                       specialization: specialization.mapValues { .int($0) })
        pipelines[key] = kernel
        return kernel
    }
}
