import CVulkan

/// A storage buffer (tensors, parameters) in device-local memory, or a host-visible
/// staging buffer whose bytes the CPU reads and writes directly.
public final class GPUBuffer: @unchecked Sendable {
    public enum Residency: Sendable { case device, host }

    public let size: Int
    public let residency: Residency
    public var context: GPUContext { unownedContext }
    let handle: VkBuffer
    private let allocation: MemoryAllocator.Allocation
    /// Nil only for the context's own pooled staging buffers, which it destroys before
    /// itself (a strong reference there would keep the context alive for ever).
    private let retainedContext: GPUContext?
    private unowned(unsafe) let unownedContext: GPUContext

    public convenience init(context: GPUContext, size: Int, residency: Residency = .device) throws {
        try self.init(context: context, size: size, residency: residency, retainsContext: true)
    }

    init(context: GPUContext, size: Int, residency: Residency, retainsContext: Bool) throws {
        guard size > 0 else { throw GPUError.invalidArgument("buffer size \(size) is empty") }
        self.retainedContext = retainsContext ? context : nil
        self.unownedContext = context
        self.size = size
        self.residency = residency
        var info = VkBufferCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO
        info.size = UInt64(size)
        info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT.rawValue | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT.rawValue
            | VK_BUFFER_USAGE_TRANSFER_SRC_BIT.rawValue | VK_BUFFER_USAGE_TRANSFER_DST_BIT.rawValue
        info.sharingMode = VK_SHARING_MODE_EXCLUSIVE
        var buffer: VkBuffer? = nil
        try vkCheck(vkCreateBuffer(context.handle, &info, nil, &buffer), "vkCreateBuffer(\(size) bytes)")
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
    }

    deinit {
        vkDestroyBuffer(context.handle, handle, nil)
        context.allocator.free(allocation)
    }

    /// The CPU view of a host buffer's bytes. Read only after the GPU work writing it has
    /// been waited for; write only before submitting work that reads it.
    public var contents: UnsafeMutableRawBufferPointer {
        precondition(residency == .host, "only host buffers are mapped")
        return UnsafeMutableRawBufferPointer(start: allocation.mapped, count: size)
    }
}
