import CVulkan

/// Dispatches recorded once into a secondary command buffer and replayed into any number of
/// recordings (`CommandRecorder.replay`), for work that is the same every frame: a model's
/// inference (its launches, buffers and push blocks never change) cost the tracker's thread
/// about 0.3 ms of recording a 720p frame on the H200 node, for commands the GPU runs the same
/// way either way. It keeps what its commands use alive, and may be replayed in
/// several submissions at once.
public final class RecordedCommands {
    public let context: GPUContext
    /// The queue whose recordings may replay it (a secondary command buffer belongs to one
    /// queue family).
    var queue: GPUQueue { recorder.queue }
    let commandBuffer: VkCommandBuffer
    /// Every resource the commands read (writes included) and write.
    let reads: [ObjectIdentifier]
    let writes: [ObjectIdentifier]
    private let pool: VkCommandPool
    /// Holds every resource the commands bind.
    private let recorder: CommandRecorder

    /// Records `body`'s dispatches (no transfers, no timed sections). Throws what recording
    /// threw, or the first pipeline that failed to compile.
    /// For the replays of `lane` (by default the calling thread's lane).
    public init(context: GPUContext, lane: GPULane = .current, _ body: (CommandRecorder) throws -> Void) throws {
        let (pool, buffer) = try makeCommandBuffer(device: context.handle, queueFamilyIndex: context.queue(for: lane).family,
                                                   level: VK_COMMAND_BUFFER_LEVEL_SECONDARY, transient: false)
        let recorder = CommandRecorder(recordingFor: context, lane: lane, into: buffer)
        do {
            var inheritance = VkCommandBufferInheritanceInfo()
            inheritance.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO
            var beginInfo = VkCommandBufferBeginInfo()
            beginInfo.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO
            beginInfo.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT.rawValue
            try withUnsafePointer(to: &inheritance) { inheritancePointer in
                beginInfo.pInheritanceInfo = inheritancePointer
                try vkCheck(vkBeginCommandBuffer(buffer, &beginInfo), "vkBeginCommandBuffer")
            }
            try body(recorder)
            if let failure = recorder.pipelineFailure { throw failure }
            try vkCheck(vkEndCommandBuffer(buffer), "vkEndCommandBuffer")
        } catch {
            vkDestroyCommandPool(context.handle, pool, nil)
            throw error
        }
        (self.context, self.pool, self.commandBuffer, self.recorder) = (context, pool, buffer, recorder)
        let writes = recorder.replayWrites ?? []
        self.writes = Array(writes)
        self.reads = Array((recorder.replayReads ?? []).subtracting(writes))
        context.createdObjects.add()
    }

    deinit {
        // Reached only when no recording holds it, so no submission that replays it is pending.
        vkDestroyCommandPool(context.handle, pool, nil)
    }
}
