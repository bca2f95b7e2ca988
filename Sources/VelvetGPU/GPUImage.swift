import CVulkan
import Foundation

/// Pixel formats Velvet keeps on the GPU. The unorm r8/rg8/r16/rg16 formats hold video
/// planes exactly as decoded (8-bit, or up to 16-bit samples).
public enum PixelFormat: String, Sendable, CaseIterable {
    case rgba8, rgba16f, r16f, r32f, rgba32f
    case r8, rg8, r16, rg16, rgba16

    var vkFormat: VkFormat {
        switch self {
        case .rgba8: return VK_FORMAT_R8G8B8A8_UNORM
        case .rgba16f: return VK_FORMAT_R16G16B16A16_SFLOAT
        case .r16f: return VK_FORMAT_R16_SFLOAT
        case .r32f: return VK_FORMAT_R32_SFLOAT
        case .rgba32f: return VK_FORMAT_R32G32B32A32_SFLOAT
        case .r8: return VK_FORMAT_R8_UNORM
        case .rg8: return VK_FORMAT_R8G8_UNORM
        case .r16: return VK_FORMAT_R16_UNORM
        case .rg16: return VK_FORMAT_R16G16_UNORM
        case .rgba16: return VK_FORMAT_R16G16B16A16_UNORM
        }
    }

    public var bytesPerPixel: Int {
        switch self {
        case .r8: return 1
        case .r16f, .rg8, .r16: return 2
        case .rgba8, .r32f, .rg16: return 4
        case .rgba16f, .rgba16: return 8
        case .rgba32f: return 16
        }
    }
}

/// A 2D image in GENERAL layout, usable as a storage image, a sampled image and a
/// transfer source/destination. Memory comes from the context's block allocator.
public final class GPUImage: @unchecked Sendable {
    public let width: Int
    public let height: Int
    public let format: PixelFormat
    public let context: GPUContext
    let handle: VkImage
    let view: VkImageView
    private let allocation: MemoryAllocator.Allocation

    public var byteCount: Int { width * height * format.bytesPerPixel }

    public init(context: GPUContext, width: Int, height: Int, format: PixelFormat) throws {
        let limit = Int(context.limits.maxImageDimension2D)
        guard width > 0, height > 0 else {
            throw GPUError.invalidArgument("image size \(width)x\(height) is empty")
        }
        guard width <= limit, height <= limit else {
            throw GPUError.invalidArgument("image size \(width)x\(height) exceeds this device's limit of \(limit) px per side")
        }
        let traceStart = DispatchTime.now().uptimeNanoseconds
        self.context = context
        self.width = width
        self.height = height
        self.format = format
        let device = context.handle

        var info = VkImageCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO
        info.imageType = VK_IMAGE_TYPE_2D
        info.format = format.vkFormat
        info.extent = VkExtent3D(width: UInt32(width), height: UInt32(height), depth: 1)
        info.mipLevels = 1
        info.arrayLayers = 1
        info.samples = VK_SAMPLE_COUNT_1_BIT
        info.tiling = VK_IMAGE_TILING_OPTIMAL
        info.usage = VK_IMAGE_USAGE_STORAGE_BIT.rawValue | VK_IMAGE_USAGE_SAMPLED_BIT.rawValue
            | VK_IMAGE_USAGE_TRANSFER_SRC_BIT.rawValue | VK_IMAGE_USAGE_TRANSFER_DST_BIT.rawValue
        let families = context.queueFamilies
        // Written on one queue and read on the other (the look-ahead's uploads and person masks).
        info.sharingMode = families.count > 1 ? VK_SHARING_MODE_CONCURRENT : VK_SHARING_MODE_EXCLUSIVE
        info.queueFamilyIndexCount = families.count > 1 ? UInt32(families.count) : 0
        info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED
        var image: VkImage? = nil
        try families.withUnsafeBufferPointer { indices in
            info.pQueueFamilyIndices = indices.baseAddress
            try vkCheck(vkCreateImage(device, &info, nil, &image), "vkCreateImage(\(width)x\(height) \(format))")
        }

        var requirements = VkMemoryRequirements()
        vkGetImageMemoryRequirements(device, image, &requirements)
        let allocation: MemoryAllocator.Allocation
        do {
            allocation = try context.allocator.allocate(requirements, residency: .deviceLocal, kind: .image)
            try vkCheck(vkBindImageMemory(device, image, allocation.memory, allocation.offset), "vkBindImageMemory")
        } catch {
            vkDestroyImage(device, image, nil)
            throw error
        }

        var viewInfo = VkImageViewCreateInfo()
        viewInfo.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO
        viewInfo.image = image
        viewInfo.viewType = VK_IMAGE_VIEW_TYPE_2D
        viewInfo.format = format.vkFormat
        viewInfo.subresourceRange = VkImageSubresourceRange(
            aspectMask: VK_IMAGE_ASPECT_COLOR_BIT.rawValue, baseMipLevel: 0, levelCount: 1, baseArrayLayer: 0, layerCount: 1)
        var view: VkImageView? = nil
        do {
            try vkCheck(vkCreateImageView(device, &viewInfo, nil, &view), "vkCreateImageView")
        } catch {
            vkDestroyImage(device, image, nil)
            context.allocator.free(allocation)
            throw error
        }
        self.handle = image!
        self.view = view!
        self.allocation = allocation
        context.createdObjects.add()

        // Move to GENERAL once; every later use keeps that layout.
        let recorder = try CommandRecorder(context: context)
        recorder.transitionToGeneral(self)
        try recorder.submit().wait()
        // Traced: the wait is one for everything queued before it (up to 76 ms on lavapipe in a
        // render's first frames).
        Trace.shared?.record("gpu.image", since: traceStart)
    }

    deinit {
        vkDestroyImageView(context.handle, view, nil)
        vkDestroyImage(context.handle, handle, nil)
        context.allocator.free(allocation)
    }
}
