import Foundation

/// Host-visible staging buffers for uploads and downloads, kept between frames: every
/// frame moves the same few sizes, and a fresh buffer per transfer cost a Vulkan object
/// (and the validation layer's tracking of it) each time. Sizes are rounded up to a size
/// class so that nearby sizes share buffers; idle bytes are capped.
final class StagingPool: @unchecked Sendable {
    private let lock = NSLock()
    private var idle: [Int: [GPUBuffer]] = [:]
    private var idleBytes = 0
    private static let maxIdleBytes = 256 << 20

    /// Powers of two up to 1 MiB, then whole MiB.
    static func sizeClass(_ size: Int) -> Int {
        let mebibyte = 1 << 20
        if size > mebibyte { return (size + mebibyte - 1) / mebibyte * mebibyte }
        var rounded = 4096
        while rounded < size { rounded <<= 1 }
        return rounded
    }

    func take(context: GPUContext, size: Int) throws -> StagingLease {
        let rounded = Self.sizeClass(size)
        let reused = lock.withLock { () -> GPUBuffer? in
            guard let buffer = idle[rounded]?.popLast() else { return nil }
            idleBytes -= rounded
            return buffer
        }
        let buffer = try reused ?? GPUBuffer(context: context, size: rounded, residency: .host, retainsContext: false)
        return StagingLease(buffer: buffer, count: size, pool: self, context: context)
    }

    fileprivate func give(_ buffer: GPUBuffer) {
        lock.withLock {
            guard idleBytes + buffer.size <= Self.maxIdleBytes else { return }
            idle[buffer.size, default: []].append(buffer)
            idleBytes += buffer.size
        }
    }

    var idleBufferCount: Int { lock.withLock { idle.values.map(\.count).reduce(0, +) } }

    func removeAll() {
        lock.withLock {
            idle.removeAll()
            idleBytes = 0
        }
    }
}

/// A staging buffer on loan: `count` bytes of it are in use; it goes back to the pool
/// when the last holder (the recorder, or a readback) lets go. The lease keeps the context
/// alive, as the buffer itself does not.
final class StagingLease: @unchecked Sendable {
    let buffer: GPUBuffer
    let count: Int
    private let pool: StagingPool
    private let context: GPUContext

    fileprivate init(buffer: GPUBuffer, count: Int, pool: StagingPool, context: GPUContext) {
        self.buffer = buffer
        self.count = count
        self.pool = pool
        self.context = context
    }

    deinit { pool.give(buffer) }

    var contents: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: buffer.contents.prefix(count))
    }
}

/// Bytes copied into upload staging ahead of the recording that uploads them, on another
/// thread: a video's decode thread stages each frame's planes, so the GPU thread, the
/// render's bottleneck at small frames, records the GPU's copy without copying the frame
/// itself (`CommandRecorder.upload(_:to:rowPitch:)`). The staging goes back to the pool when
/// the last holder lets go: the recorder holds it until its submission has completed.
public final class StagedBytes: @unchecked Sendable {
    let lease: StagingLease
    let context: GPUContext
    /// The bytes staged.
    public var count: Int { lease.count }

    public init(context: GPUContext, copying bytes: UnsafeRawBufferPointer) throws {
        self.context = context
        lease = try context.staging.take(context: context, size: bytes.count)
        if let destination = lease.contents.baseAddress, let source = bytes.baseAddress {
            ParallelCopy.copy(to: destination, from: source, count: bytes.count)
        }
    }
}
