import CVulkan
import VelvetKernels

/// A value for a kernel's specialisation constant (`layout(constant_id = N) const ...`).
public enum SpecializationValue: Sendable {
    case int(Int32), uint(UInt32), float(Float), bool(Bool)

    var bits: UInt32 {
        switch self {
        case .int(let value): return UInt32(bitPattern: value)
        case .uint(let value): return value
        case .float(let value): return value.bitPattern
        case .bool(let value): return value ? 1 : 0
        }
    }
}

/// A compute pipeline built from an embedded kernel. Descriptors are pushed per dispatch
/// (VK_KHR_push_descriptor), so there are no descriptor pools to leak.
public final class ComputeKernel: @unchecked Sendable {
    public let source: KernelSource
    public let context: GPUContext
    let pipeline: VkPipeline
    let pipelineLayout: VkPipelineLayout
    private let setLayout: VkDescriptorSetLayout

    public init(context: GPUContext, source: KernelSource, specialization: [String: SpecializationValue] = [:]) throws {
        self.context = context
        self.source = source
        let device = context.handle
        let arena = Arena()
        precondition(source.bindings.allSatisfy { $0.set == 0 }, "\(source.name): kernels use descriptor set 0 only")

        let layoutBindings = source.bindings.map { binding -> VkDescriptorSetLayoutBinding in
            var layoutBinding = VkDescriptorSetLayoutBinding()
            layoutBinding.binding = binding.binding
            layoutBinding.descriptorType = binding.kind.vkDescriptorType
            layoutBinding.descriptorCount = binding.count
            layoutBinding.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT.rawValue
            return layoutBinding
        }
        var setInfo = VkDescriptorSetLayoutCreateInfo()
        setInfo.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO
        setInfo.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR.rawValue
        setInfo.bindingCount = UInt32(layoutBindings.count)
        setInfo.pBindings = UnsafePointer(arena.array(layoutBindings))
        var setLayout: VkDescriptorSetLayout? = nil
        try vkCheck(vkCreateDescriptorSetLayout(device, &setInfo, nil, &setLayout), "vkCreateDescriptorSetLayout")

        var layoutInfo = VkPipelineLayoutCreateInfo()
        layoutInfo.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO
        layoutInfo.setLayoutCount = 1
        layoutInfo.pSetLayouts = UnsafePointer(arena.array([setLayout]))
        if source.pushConstantSize > 0 {
            guard source.pushConstantSize <= Int(context.limits.maxPushConstantsSize) else {
                vkDestroyDescriptorSetLayout(device, setLayout, nil)
                throw GPUError.unsupported("\(source.name) needs \(source.pushConstantSize) B of push constants")
            }
            let range = VkPushConstantRange(stageFlags: VK_SHADER_STAGE_COMPUTE_BIT.rawValue, offset: 0,
                                            size: UInt32((source.pushConstantSize + 3) / 4 * 4))
            layoutInfo.pushConstantRangeCount = 1
            layoutInfo.pPushConstantRanges = UnsafePointer(arena.pointer(to: range))
        }
        var pipelineLayout: VkPipelineLayout? = nil
        do {
            try vkCheck(vkCreatePipelineLayout(device, &layoutInfo, nil, &pipelineLayout), "vkCreatePipelineLayout")
        } catch {
            vkDestroyDescriptorSetLayout(device, setLayout, nil)
            throw error
        }

        var moduleInfo = VkShaderModuleCreateInfo()
        moduleInfo.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO
        moduleInfo.codeSize = source.spirv.count * 4
        moduleInfo.pCode = UnsafePointer(arena.array(source.spirv))
        var module: VkShaderModule? = nil
        do {
            try vkCheck(vkCreateShaderModule(device, &moduleInfo, nil, &module), "vkCreateShaderModule(\(source.name))")
        } catch {
            vkDestroyPipelineLayout(device, pipelineLayout, nil)
            vkDestroyDescriptorSetLayout(device, setLayout, nil)
            throw error
        }
        defer { vkDestroyShaderModule(device, module, nil) }

        var stage = VkPipelineShaderStageCreateInfo()
        stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO
        stage.stage = VK_SHADER_STAGE_COMPUTE_BIT
        stage.module = module
        stage.pName = arena.cString("main")
        if !specialization.isEmpty {
            let entries = try specialization.sorted { $0.key < $1.key }.enumerated().map { index, item -> VkSpecializationMapEntry in
                guard let id = source.specializationConstants[item.key] else {
                    throw GPUError.invalidArgument("\(source.name) has no specialisation constant '\(item.key)'")
                }
                return VkSpecializationMapEntry(constantID: id, offset: UInt32(index * 4), size: 4)
            }
            let data = specialization.sorted { $0.key < $1.key }.map(\.value.bits)
            var info = VkSpecializationInfo()
            info.mapEntryCount = UInt32(entries.count)
            info.pMapEntries = UnsafePointer(arena.array(entries))
            info.dataSize = data.count * 4
            info.pData = UnsafeRawPointer(arena.array(data))
            stage.pSpecializationInfo = UnsafePointer(arena.pointer(to: info))
        }
        var pipelineInfo = VkComputePipelineCreateInfo()
        pipelineInfo.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO
        pipelineInfo.stage = stage
        pipelineInfo.layout = pipelineLayout
        let cacheEntry = context.pipelineCache.entry(name: source.name, spirv: source.spirv,
                                                     specialization: specialization.sorted { $0.key < $1.key }.map(\.value.bits))
        var cacheInfo = VkPipelineCacheCreateInfo()
        cacheInfo.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO
        if let initial = cacheEntry.initialData {
            cacheInfo.initialDataSize = initial.count
            cacheInfo.pInitialData = UnsafeRawPointer(arena.array([UInt8](initial)))
        }
        var cache: VkPipelineCache? = nil
        if cacheEntry.path != nil, vkCreatePipelineCache(device, &cacheInfo, nil, &cache) != VK_SUCCESS { cache = nil }
        defer { if let cache { vkDestroyPipelineCache(device, cache, nil) } }
        var pipeline: VkPipeline? = nil
        do {
            try vkCheck(vkCreateComputePipelines(device, cache, 1, &pipelineInfo, nil, &pipeline),
                        "vkCreateComputePipelines(\(source.name))")
            if let cache { context.pipelineCache.finish(cacheEntry, cache: cache, device: device) }
        } catch {
            vkDestroyPipelineLayout(device, pipelineLayout, nil)
            vkDestroyDescriptorSetLayout(device, setLayout, nil)
            throw error
        }
        self.pipeline = pipeline!
        self.pipelineLayout = pipelineLayout!
        self.setLayout = setLayout!
        context.createdObjects.add()
    }

    deinit {
        vkDestroyPipeline(context.handle, pipeline, nil)
        vkDestroyPipelineLayout(context.handle, pipelineLayout, nil)
        vkDestroyDescriptorSetLayout(context.handle, setLayout, nil)
    }
}

extension KernelBindingKind {
    var vkDescriptorType: VkDescriptorType {
        switch self {
        case .storageImage: return VK_DESCRIPTOR_TYPE_STORAGE_IMAGE
        case .sampledImage: return VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE
        case .combinedImageSampler: return VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER
        case .sampler: return VK_DESCRIPTOR_TYPE_SAMPLER
        case .uniformBuffer: return VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
        case .storageBuffer: return VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
        case .uniformTexelBuffer: return VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
        case .storageTexelBuffer: return VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER
        }
    }
}
