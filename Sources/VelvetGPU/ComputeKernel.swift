import CVulkan
import VelvetKernels

/// A value for a kernel's specialisation constant (`layout(constant_id = N) const ...`).
public enum SpecializationValue: Sendable, CustomStringConvertible {
    case int(Int32), uint(UInt32), float(Float), bool(Bool)

    public var description: String {
        switch self {
        case .int(let value): return "\(value)"
        case .uint(let value): return "\(value)"
        case .float(let value): return "\(value)"
        case .bool(let value): return "\(value)"
        }
    }

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
/// (VK_KHR_push_descriptor), so there are no descriptor pools to leak. The layouts are made
/// in init; the pipeline itself is compiled by the context's `PipelineCompiler` and awaited
/// when the kernel is first recorded: a failure is thrown by that recorder's `submit()` (and
/// by `GPUContext.finishCompiling()`).
public final class ComputeKernel: @unchecked Sendable {
    public let source: KernelSource
    /// The kernel's name with the specialisation it was given (`beauty_spots[PASS=0]`): how
    /// dispatch timings tell its variants apart.
    public let label: String
    public let context: GPUContext
    let pipelineLayout: VkPipelineLayout
    private let setLayout: VkDescriptorSetLayout
    private let build: PipelineBuild

    public init(context: GPUContext, source: KernelSource, specialization: [String: SpecializationValue] = [:]) throws {
        self.context = context
        self.source = source
        label = specialization.isEmpty ? source.name
            : source.name + "[" + specialization.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",") + "]"
        let device = context.handle
        let arena = Arena()
        precondition(source.bindings.allSatisfy { $0.set == 0 }, "\(source.name): kernels use descriptor set 0 only")
        let constants = try specialization.sorted { $0.key < $1.key }.map { item -> (id: UInt32, bits: UInt32) in
            guard let id = source.specializationConstants[item.key] else {
                throw GPUError.invalidArgument("\(source.name) has no specialisation constant '\(item.key)'")
            }
            return (id, item.value.bits)
        }

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

        let recipe = PipelineRecipe(device: device, source: source, layout: pipelineLayout!, constants: constants,
                                    cache: context.pipelineCache,
                                    refused: context.pipelineCompiler.injectedFailure(kernel: source.name))
        let build = context.pipelineCompiler.start { try recipe.compile() }
        if context.pipelineCompiler.threadLimit == 0, case .failure(let error) = context.pipelineCompiler.result(of: build) {
            vkDestroyPipelineLayout(device, pipelineLayout, nil)
            vkDestroyDescriptorSetLayout(device, setLayout, nil)
            throw error
        }
        self.build = build
        self.pipelineLayout = pipelineLayout!
        self.setLayout = setLayout!
        context.createdObjects.add()
    }

    /// The compiled pipeline, waiting for it if it is still being compiled.
    func compiledPipeline() -> Result<VkPipeline, Error> {
        context.pipelineCompiler.result(of: build)
    }

    deinit {
        if let pipeline = context.pipelineCompiler.abandon(build) { vkDestroyPipeline(context.handle, pipeline, nil) }
        vkDestroyPipelineLayout(context.handle, pipelineLayout, nil)
        vkDestroyDescriptorSetLayout(context.handle, setLayout, nil)
    }
}

/// What vkCreateComputePipelines needs for one kernel, so that a compile thread can run it,
/// with the kernel's own VkPipelineCache loaded from and saved to `PipelineCache`. The
/// layout stays valid until the kernel's deinit, which waits for the compile first.
struct PipelineRecipe: @unchecked Sendable {
    let device: VkDevice
    let source: KernelSource
    let layout: VkPipelineLayout
    /// Specialisation constants (id, bits) in the order of their names.
    let constants: [(id: UInt32, bits: UInt32)]
    let cache: PipelineCache
    /// Fail as the driver would have (`PipelineCompiler.injectFailure`).
    let refused: Bool

    func compile() throws -> VkPipeline {
        try Trace.span("pipeline.compile \(source.name)") { try compileNow() }
    }

    private func compileNow() throws -> VkPipeline {
        let arena = Arena()
        var moduleInfo = VkShaderModuleCreateInfo()
        moduleInfo.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO
        moduleInfo.codeSize = source.spirv.count * 4
        moduleInfo.pCode = UnsafePointer(arena.array(source.spirv))
        var module: VkShaderModule? = nil
        try vkCheck(vkCreateShaderModule(device, &moduleInfo, nil, &module), "vkCreateShaderModule(\(source.name))")
        defer { vkDestroyShaderModule(device, module, nil) }

        var stage = VkPipelineShaderStageCreateInfo()
        stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO
        stage.stage = VK_SHADER_STAGE_COMPUTE_BIT
        stage.module = module
        stage.pName = arena.cString("main")
        if !constants.isEmpty {
            let entries = constants.enumerated().map { index, constant in
                VkSpecializationMapEntry(constantID: constant.id, offset: UInt32(index * 4), size: 4)
            }
            let data = constants.map(\.bits)
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
        pipelineInfo.layout = layout
        let cacheEntry = cache.entry(name: source.name, spirv: source.spirv, specialization: constants.map(\.bits))
        var cacheInfo = VkPipelineCacheCreateInfo()
        cacheInfo.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO
        if let initial = cacheEntry.initialData {
            cacheInfo.initialDataSize = initial.count
            cacheInfo.pInitialData = UnsafeRawPointer(arena.array([UInt8](initial)))
        }
        var pipelineCache: VkPipelineCache? = nil
        if cacheEntry.path != nil, vkCreatePipelineCache(device, &cacheInfo, nil, &pipelineCache) != VK_SUCCESS { pipelineCache = nil }
        defer { if let pipelineCache { vkDestroyPipelineCache(device, pipelineCache, nil) } }
        var pipeline: VkPipeline? = nil
        let result = refused ? VK_ERROR_INITIALIZATION_FAILED : vkCreateComputePipelines(device, pipelineCache, 1, &pipelineInfo, nil, &pipeline)
        try vkCheck(result, "vkCreateComputePipelines(\(source.name))")
        if let pipelineCache { cache.finish(cacheEntry, cache: pipelineCache, device: device) }
        return pipeline!
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
