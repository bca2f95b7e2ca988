import CVulkan
import Foundation

/// Device buffers for what stages upload or compute every frame (face geometry, strength-fit
/// parameters and gains). When the last holder of a pooled `GPUBuffer` lets go (the stage,
/// and the recorder once its fence has signalled) its Vulkan buffer and memory are parked
/// here and serve the next request of the same size class, so a steady render creates no
/// Vulkan buffers per frame.
final class BufferPool: @unchecked Sendable {
    struct Parked {
        let handle: VkBuffer
        let allocation: MemoryAllocator.Allocation
        /// Its texel views, kept with it: a table read as texels every frame (the face
        /// kernels') makes no view per frame either.
        let texelViews: [GPUBuffer.TexelRange: VkBufferView]
    }

    private let lock = NSLock()
    private var idle: [Int: [Parked]] = [:]
    private var idleBytes = 0
    private static let maxIdleBytes = 16 << 20

    /// Requests are rounded up to the staging pool's classes (powers of two from 4 KiB).
    static func sizeClass(_ size: Int) -> Int { StagingPool.sizeClass(size) }

    func take(sizeClass: Int) -> Parked? {
        lock.withLock {
            guard let parked = idle[sizeClass]?.popLast() else { return nil }
            idleBytes -= sizeClass
            return parked
        }
    }

    /// Keeps `parked` for reuse; false when the pool is full (the caller destroys it).
    func park(_ parked: Parked, sizeClass: Int) -> Bool {
        lock.withLock {
            guard idleBytes + sizeClass <= Self.maxIdleBytes else { return false }
            idle[sizeClass, default: []].append(parked)
            idleBytes += sizeClass
            return true
        }
    }

    var idleBufferCount: Int { lock.withLock { idle.values.map(\.count).reduce(0, +) } }

    func destroyAll(device: VkDevice, allocator: MemoryAllocator) {
        lock.withLock {
            for parked in idle.values.joined() {
                for view in parked.texelViews.values { vkDestroyBufferView(device, view, nil) }
                vkDestroyBuffer(device, parked.handle, nil)
                allocator.free(parked.allocation)
            }
            idle.removeAll()
            idleBytes = 0
        }
    }
}

/// How many Vulkan objects a context has created (buffers, images, pipelines, command slots,
/// memory blocks): a steady render adds none per frame, which tests check.
final class ObjectTally: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var total: Int { lock.withLock { count } }
}
