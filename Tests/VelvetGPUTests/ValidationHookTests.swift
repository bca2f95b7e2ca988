@testable import VelvetGPU
import CVulkan
import XCTest

/// Proves the validation hook catches real misuse, so a silent log means something.
final class ValidationHookTests: XCTestCase {
    func testInvalidCallIsReported() throws {
        let context = try GPUContext(request: nil, validation: true)
        var info = VkBufferCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO
        info.size = 0 // invalid: VUID-VkBufferCreateInfo-size-00912
        info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT.rawValue
        var buffer: VkBuffer? = nil
        let result = vkCreateBuffer(context.handle, &info, nil, &buffer)
        if result == VK_SUCCESS, let buffer { vkDestroyBuffer(context.handle, buffer, nil) }
        let messages = context.validationLog?.drain() ?? []
        XCTAssertTrue(messages.contains { $0.contains("size") }, "expected a validation message, got \(messages)")
    }
}
