import CVulkan
import Foundation

/// Which queue a recording goes to. A video render's look-ahead (the frames' uploads for the
/// tracker and the tracker itself) runs on a queue of its own where the device has a second
/// compute queue family, so the GPU can run it beside the frames' stages instead of in turn
/// with them; elsewhere (lavapipe) both lanes are the one queue.
public enum GPULane: Sendable {
    case main
    case lookAhead

    private static let key = "velvet.gpu-lane"

    /// The lane of recorders made on this thread without one named (`main` unless
    /// `useOnThisThread()` set another).
    public static var current: GPULane {
        Thread.current.threadDictionary[key] as? GPULane ?? .main
    }

    /// Makes `self` the lane of the calling thread's recorders from now on.
    public func useOnThisThread() {
        Thread.current.threadDictionary[Self.key] = self
    }
}

/// One queue of the device with what recording for it needs: its family's command slots
/// and a lock that serialises submissions.
final class GPUQueue: @unchecked Sendable {
    let handle: VkQueue
    let family: UInt32
    let slots: CommandSlotPool
    private let lock = NSLock()

    init(handle: VkQueue, family: UInt32, slots: CommandSlotPool) {
        (self.handle, self.family, self.slots) = (handle, family, slots)
    }

    func submit(_ commandBuffer: VkCommandBuffer, fence: VkFence) throws {
        var buffer: VkCommandBuffer? = commandBuffer
        try withUnsafePointer(to: &buffer) { pointer in
            var info = VkSubmitInfo()
            info.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO
            info.commandBufferCount = 1
            info.pCommandBuffers = pointer
            try lock.withLock { try vkCheck(vkQueueSubmit(handle, 1, &info, fence), "vkQueueSubmit") }
        }
    }
}
