import CVulkan

/// How a kernel reads a sampled image. Coordinates clamp to the edge (replicated border).
public enum GPUSampler: Sendable, CaseIterable {
    case nearest, linear
}

/// One VkSampler per GPUSampler, created with the device and shared by every dispatch.
final class SamplerCache: @unchecked Sendable {
    private let device: VkDevice
    private var samplers: [GPUSampler: VkSampler] = [:]

    init(device: VkDevice) throws {
        self.device = device
        for kind in GPUSampler.allCases {
            var info = VkSamplerCreateInfo()
            info.sType = VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO
            let filter = kind == .linear ? VK_FILTER_LINEAR : VK_FILTER_NEAREST
            info.magFilter = filter
            info.minFilter = filter
            info.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST
            info.addressModeU = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
            info.addressModeV = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
            info.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
            info.maxLod = 0
            var sampler: VkSampler? = nil
            try vkCheck(vkCreateSampler(device, &info, nil, &sampler), "vkCreateSampler")
            samplers[kind] = sampler
        }
    }

    subscript(kind: GPUSampler) -> VkSampler { samplers[kind]! }

    func destroyAll() {
        for sampler in samplers.values { vkDestroySampler(device, sampler, nil) }
        samplers.removeAll()
    }
}
