import CVulkan
import Foundation

/// What a buffer's 16-byte texels hold, as a kernel reads them: four floats (`imageBuffer`,
/// rgba32f) or four unsigned integers (`uimageBuffer`, rgba32ui; lists of indices and counts,
/// exact at any size).
public enum TexelFormat: Sendable, Hashable {
    case float, unsigned

    var vkFormat: VkFormat {
        switch self {
        case .float: return VK_FORMAT_R32G32B32A32_SFLOAT
        case .unsigned: return VK_FORMAT_R32G32B32A32_UINT
        }
    }
}

/// A storage buffer (tensors, parameters) in device-local memory, or a host-visible
/// staging buffer whose bytes the CPU reads and writes directly.
public final class GPUBuffer: @unchecked Sendable {
    public enum Residency: Sendable { case device, host }

    public let size: Int
    public let residency: Residency
    public var context: GPUContext { unownedContext }
    let handle: VkBuffer
    private let allocation: MemoryAllocator.Allocation
    /// Its Vulkan buffer and memory go back to the context's `BufferPool` when it is freed.
    private let isPooled: Bool
    /// Nil only for the context's own pooled staging buffers, which it destroys before
    /// itself (a strong reference there would keep the context alive for ever).
    private let retainedContext: GPUContext?
    private unowned(unsafe) let unownedContext: GPUContext
    /// Ranges of the buffer as 16-byte texels (`GPUBinding.texels`), made on first use.
    struct TexelRange: Hashable { var offset, size: Int; var format: TexelFormat }
    private var texelViews: [TexelRange: VkBufferView] = [:]
    private let texelViewLock = NSLock()

    public convenience init(context: GPUContext, size: Int, residency: Residency = .device) throws {
        try self.init(context: context, size: size, residency: residency, retainsContext: true)
    }

    /// A device buffer of at least `size` bytes from the context's pool, for data a stage makes
    /// every frame: reused only after every holder of the previous one let go, so frames in
    /// flight never share one. Its `size` is the pool's size class.
    public static func pooled(context: GPUContext, size: Int) throws -> GPUBuffer {
        guard size > 0 else { throw GPUError.invalidArgument("buffer size \(size) is empty") }
        let sizeClass = BufferPool.sizeClass(size)
        if let parked = context.buffers.take(sizeClass: sizeClass) {
            return GPUBuffer(context: context, adopting: parked, size: sizeClass)
        }
        return try GPUBuffer(context: context, size: sizeClass, residency: .device, retainsContext: true, isPooled: true)
    }

    private init(context: GPUContext, adopting parked: BufferPool.Parked, size: Int) {
        (retainedContext, unownedContext, self.size, residency) = (context, context, size, .device)
        (handle, allocation, isPooled) = (parked.handle, parked.allocation, true)
        texelViews = parked.texelViews
    }

    init(context: GPUContext, size: Int, residency: Residency, retainsContext: Bool, isPooled: Bool = false) throws {
        guard size > 0 else { throw GPUError.invalidArgument("buffer size \(size) is empty") }
        self.isPooled = isPooled
        self.retainedContext = retainsContext ? context : nil
        self.unownedContext = context
        self.size = size
        self.residency = residency
        var info = VkBufferCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO
        info.size = UInt64(size)
        info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT.rawValue | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT.rawValue
            | VK_BUFFER_USAGE_TRANSFER_SRC_BIT.rawValue | VK_BUFFER_USAGE_TRANSFER_DST_BIT.rawValue
            | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT.rawValue | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT.rawValue | VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT.rawValue
        let families = context.queueFamilies
        // Written on one queue and read on the other (the look-ahead's uploads and person masks).
        info.sharingMode = families.count > 1 ? VK_SHARING_MODE_CONCURRENT : VK_SHARING_MODE_EXCLUSIVE
        info.queueFamilyIndexCount = families.count > 1 ? UInt32(families.count) : 0
        var buffer: VkBuffer? = nil
        try families.withUnsafeBufferPointer { indices in
            info.pQueueFamilyIndices = indices.baseAddress
            try vkCheck(vkCreateBuffer(context.handle, &info, nil, &buffer), "vkCreateBuffer(\(size) bytes)")
        }
        var requirements = VkMemoryRequirements()
        vkGetBufferMemoryRequirements(context.handle, buffer, &requirements)
        do {
            allocation = try context.allocator.allocate(
                requirements, residency: residency == .host ? .hostVisible : .deviceLocal, kind: .buffer)
            try vkCheck(vkBindBufferMemory(context.handle, buffer, allocation.memory, allocation.offset), "vkBindBufferMemory")
        } catch {
            vkDestroyBuffer(context.handle, buffer, nil)
            throw error
        }
        handle = buffer!
        context.createdObjects.add()
    }

    deinit {
        if isPooled, context.buffers.park(BufferPool.Parked(handle: handle, allocation: allocation, texelViews: texelViews),
                                          sizeClass: size) { return }
        for view in texelViews.values { vkDestroyBufferView(context.handle, view, nil) }
        vkDestroyBuffer(context.handle, handle, nil)
        context.allocator.free(allocation)
    }

    /// Makes the view of `size` bytes from `offset` as texels of `format` that
    /// `GPUBinding.texels` binds (once per range; later calls return at once), so recording
    /// never has to.
    public func prepareTexels(offset: Int, size: Int, format: TexelFormat = .float) throws {
        _ = try texels(offset: offset, size: size, format: format)
    }

    /// The view of `size` bytes from `offset` as texels of `format`, made on first use.
    func texels(offset: Int, size: Int, format: TexelFormat) throws -> VkBufferView {
        texelViewLock.lock()
        defer { texelViewLock.unlock() }
        let range = TexelRange(offset: offset, size: size, format: format)
        if let view = texelViews[range] { return view }
        let limits = context.limits
        guard offset >= 0, size >= 16, size % 16 == 0, offset + size <= self.size,
              offset % Int(max(limits.minTexelBufferOffsetAlignment, 1)) == 0, size / 16 <= Int(limits.maxTexelBufferElements) else {
            throw GPUError.invalidArgument("\(size) B from \(offset) of a \(self.size) B buffer cannot be read as texels")
        }
        var info = VkBufferViewCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO
        info.buffer = handle
        info.format = format.vkFormat
        info.offset = VkDeviceSize(offset)
        info.range = VkDeviceSize(size)
        var view: VkBufferView? = nil
        try vkCheck(vkCreateBufferView(context.handle, &info, nil, &view), "vkCreateBufferView(\(size) bytes)")
        context.createdObjects.add()
        texelViews[range] = view!
        return view!
    }

    /// The CPU view of a host buffer's bytes. Read only after the GPU work writing it has
    /// been waited for; write only before submitting work that reads it.
    public var contents: UnsafeMutableRawBufferPointer {
        precondition(residency == .host, "only host buffers are mapped")
        return UnsafeMutableRawBufferPointer(start: allocation.mapped, count: size)
    }
}
