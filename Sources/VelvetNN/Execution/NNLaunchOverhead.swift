import VelvetGPU
import VelvetKernels

/// What one kernel launch costs the GPU before it does any work: `count` launches of a
/// one-invocation elementwise kernel, timed with GPU timestamps. Dependent launches
/// rewrite one buffer, so each waits behind a barrier for the one before (as a model's
/// layers do): the recorder's automatic compute/transfer barrier, or the compute-only
/// one a model's levels use; independent ones write their own buffers and need none.
public enum NNLaunchOverhead {
    public struct Measurement: Sendable {
        public let dependentMicroseconds: Double
        public let computeBarrierMicroseconds: Double
        public let independentMicroseconds: Double
    }

    public static func measure(kernels: NNKernels, count: Int = 100) throws -> Measurement {
        let context = kernels.context
        let kernel = try kernels.kernel(KernelLibrary.NnElementwisePush.self)
        // In place: a[0] = relu(a[0]) on one pixel of one channel group.
        let push = KernelLibrary.NnElementwisePush(aOffset: 0, outOffset: 0, bOffset: 0, pixels: 1, c4Count: 1, channels: 4, op: 0,
                                                   bBroadcast: 0, bC4: 1, act: 1, alphaOffset: 0, addendOffset: 0, hasAddend: 0)
        let shared = try GPUBuffer(context: context, size: 16)
        let own = try (0..<count).map { _ in try GPUBuffer(context: context, size: 16) }

        func time(_ buffers: [GPUBuffer], ordering: DispatchOrdering = .automatic) throws -> Double {
            var best = Double.infinity
            for _ in 0..<3 {
                let recorder = try CommandRecorder(context: context)
                recorder.beginSection("launches")
                for buffer in buffers {
                    recorder.dispatch(kernel, [.buffer(buffer), .buffer(buffer), .buffer(buffer), .buffer(buffer), .buffer(buffer)],
                                      push: push, groups: (1, 1, 1), ordering: ordering)
                }
                recorder.endSection()
                if let milliseconds = try recorder.submit().wait()["launches"] { best = min(best, milliseconds) }
            }
            return best * 1000 / Double(buffers.count)
        }
        return Measurement(dependentMicroseconds: try time([GPUBuffer](repeating: shared, count: count)),
                           computeBarrierMicroseconds: try time([GPUBuffer](repeating: shared, count: count), ordering: .afterBarrier),
                           independentMicroseconds: try time(own))
    }
}
