import CVulkan
import Foundation

/// What one recording needs: a command pool with its one command buffer, a timestamp
/// query pool and a fence. Creating these per frame cost time on every frame and grew the
/// validation layer's bookkeeping over long renders, so the context keeps used ones.
final class CommandSlot {
    let pool: VkCommandPool
    let commandBuffer: VkCommandBuffer
    let queryPool: VkQueryPool?
    let fence: VkFence

    init(device: VkDevice, queueFamilyIndex: UInt32, queryCount: UInt32?) throws {
        let (pool, buffer) = try makeCommandBuffer(device: device, queueFamilyIndex: queueFamilyIndex,
                                                   level: VK_COMMAND_BUFFER_LEVEL_PRIMARY, transient: true)
        var queryPool: VkQueryPool? = nil
        var fence: VkFence? = nil
        do {
            if let queryCount {
                var queryInfo = VkQueryPoolCreateInfo()
                queryInfo.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO
                queryInfo.queryType = VK_QUERY_TYPE_TIMESTAMP
                queryInfo.queryCount = queryCount
                try vkCheck(vkCreateQueryPool(device, &queryInfo, nil, &queryPool), "vkCreateQueryPool")
            }
            var fenceInfo = VkFenceCreateInfo()
            fenceInfo.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO
            try vkCheck(vkCreateFence(device, &fenceInfo, nil, &fence), "vkCreateFence")
        } catch {
            if let queryPool { vkDestroyQueryPool(device, queryPool, nil) }
            vkDestroyCommandPool(device, pool, nil)
            throw error
        }
        self.pool = pool
        self.commandBuffer = buffer
        self.queryPool = queryPool
        self.fence = fence!
    }

    func destroy(device: VkDevice) {
        vkDestroyFence(device, fence, nil)
        if let queryPool { vkDestroyQueryPool(device, queryPool, nil) }
        vkDestroyCommandPool(device, pool, nil)
    }
}

/// A command pool with one command buffer of `level` (the pool destroyed again if the buffer
/// cannot be allocated).
func makeCommandBuffer(device: VkDevice, queueFamilyIndex: UInt32, level: VkCommandBufferLevel,
                       transient: Bool) throws -> (VkCommandPool, VkCommandBuffer) {
    var poolInfo = VkCommandPoolCreateInfo()
    poolInfo.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO
    poolInfo.flags = transient ? VK_COMMAND_POOL_CREATE_TRANSIENT_BIT.rawValue : 0
    poolInfo.queueFamilyIndex = queueFamilyIndex
    var pool: VkCommandPool? = nil
    try vkCheck(vkCreateCommandPool(device, &poolInfo, nil, &pool), "vkCreateCommandPool")
    var allocateInfo = VkCommandBufferAllocateInfo()
    allocateInfo.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO
    allocateInfo.commandPool = pool
    allocateInfo.level = level
    allocateInfo.commandBufferCount = 1
    var buffer: VkCommandBuffer? = nil
    do {
        try vkCheck(vkAllocateCommandBuffers(device, &allocateInfo, &buffer), "vkAllocateCommandBuffers")
    } catch {
        vkDestroyCommandPool(device, pool, nil)
        throw error
    }
    return (pool!, buffer!)
}

/// Idle command slots, handed out reset. A slot comes back only when the GPU is done with
/// it (its fence signalled, or it was never submitted).
final class CommandSlotPool: @unchecked Sendable {
    private let device: VkDevice
    private let queueFamilyIndex: UInt32
    private let queryCount: UInt32?
    private let tally: ObjectTally
    private let lock = NSLock()
    private var idle: [CommandSlot] = []
    /// More idle slots than the pipeline ever has in flight are destroyed.
    private static let maxIdle = 16

    init(device: VkDevice, queueFamilyIndex: UInt32, queryCount: UInt32?, tally: ObjectTally) {
        self.tally = tally
        self.device = device
        self.queueFamilyIndex = queueFamilyIndex
        self.queryCount = queryCount
    }

    func take() throws -> CommandSlot {
        guard let slot = lock.withLock({ idle.popLast() }) else {
            tally.add()
            return try CommandSlot(device: device, queueFamilyIndex: queueFamilyIndex, queryCount: queryCount)
        }
        do {
            try vkCheck(vkResetCommandPool(device, slot.pool, 0), "vkResetCommandPool")
            var fence: VkFence? = slot.fence
            try vkCheck(vkResetFences(device, 1, &fence), "vkResetFences")
        } catch {
            slot.destroy(device: device)
            throw error
        }
        return slot
    }

    func give(_ slot: CommandSlot) {
        let kept = lock.withLock { () -> Bool in
            guard idle.count < Self.maxIdle else { return false }
            idle.append(slot)
            return true
        }
        if !kept { slot.destroy(device: device) }
    }

    /// Created slots minus destroyed ones would be the leak signal; the idle count is what
    /// tests can observe.
    var idleCount: Int { lock.withLock { idle.count } }

    func destroyAll() {
        lock.withLock {
            for slot in idle { slot.destroy(device: device) }
            idle.removeAll()
        }
    }
}
