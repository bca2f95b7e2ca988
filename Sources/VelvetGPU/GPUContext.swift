import CVulkan
import Foundation

/// A Vulkan instance, one chosen device and its compute queue (two where the device has a
/// second compute family: `GPULane`).
///
/// Every GPU object keeps a strong reference to its context, so the device outlives
/// everything created from it. Thread safety: queue submission and memory allocation are
/// serialised by locks inside; command recording uses a pool per recorder.
public final class GPUContext: @unchecked Sendable {
    public let device: GPUDeviceInfo
    /// Present when validation is on (VELVET_VALIDATION=1); tests fail on any message.
    public let validationLog: ValidationLog?

    let instance: VkInstance
    let physicalDevice: VkPhysicalDevice
    let handle: VkDevice
    /// The frames' queue, and the look-ahead's (the same one without a second compute family).
    let mainQueue: GPUQueue
    let lookAheadQueue: GPUQueue
    /// The queue families resources are shared by (images and buffers are made concurrent
    /// when there are two).
    let queueFamilies: [UInt32]
    let limits: VkPhysicalDeviceLimits
    let memoryProperties: VkPhysicalDeviceMemoryProperties
    /// Nanoseconds per timestamp tick; nil when the queue has no timestamps.
    let timestampPeriod: Double?
    let cmdPushDescriptorSet: PFN_vkCmdPushDescriptorSetKHR
    /// With a trace (`Trace.shared`): a device timestamp and the CLOCK_MONOTONIC
    /// nanoseconds of the same instant, so timed sections can be placed on the trace's
    /// timeline; nil otherwise, or when the device cannot calibrate.
    let traceClock: (ticks: UInt64, nanoseconds: UInt64)?
    private let messenger: VkDebugUtilsMessengerEXT?
    let allocator: MemoryAllocator
    let samplers: SamplerCache
    var commandSlots: CommandSlotPool { mainQueue.slots }
    let staging = StagingPool()
    let buffers = BufferPool()
    let createdObjects: ObjectTally
    /// Compiled pipelines on disk (`PipelineCache`).
    public let pipelineCache: PipelineCache
    /// The threads kernels' pipelines compile on.
    let pipelineCompiler: PipelineCompiler

    /// Opens the device named by `request` (index or name substring), else by
    /// `VELVET_DEVICE`, else the best one. Validation follows `VELVET_VALIDATION`.
    public convenience init(request: String? = nil) throws {
        let environment = ProcessInfo.processInfo.environment
        try self.init(request: request ?? environment["VELVET_DEVICE"], validation: environment["VELVET_VALIDATION"] == "1")
    }

    /// - Parameters:
    ///   - pipelineCacheRoot: the folder of `PipelineCache`'s files (nil: off); by default the
    ///     one the environment names.
    ///   - compileThreads: `PipelineCompiler`'s workers (0: each kernel compiles in its init);
    ///     by default `VELVET_COMPILE_THREADS`, else the processor count up to 8.
    public init(request: String?, validation: Bool, pipelineCacheRoot: String?? = .none, compileThreads: Int? = nil) throws {
        let log = validation ? ValidationLog() : nil
        let tally = ObjectTally()
        let instance = try Self.createInstance(validationLog: log)
        var messenger: VkDebugUtilsMessengerEXT? = nil
        var deviceHandle: VkDevice? = nil
        do {
            if let log { messenger = try Self.createMessenger(instance: instance, log: log) }
            let candidates = try Self.physicalDevices(instance)
            let infos = candidates.enumerated().map { Self.describe($0.element, index: $0.offset) }
            let chosen = try DeviceSelector.choose(from: infos, request: request)
            let physical = candidates[chosen.index]

            var properties = VkPhysicalDeviceProperties()
            vkGetPhysicalDeviceProperties(physical, &properties)
            guard velvet_vk_api_major(properties.apiVersion) > 1 || velvet_vk_api_minor(properties.apiVersion) >= 2 else {
                throw GPUError.unsupported("\(chosen.name) supports Vulkan \(chosen.apiVersion); Velvet needs 1.2")
            }
            guard Self.deviceExtensions(physical).contains("VK_KHR_push_descriptor") else {
                throw GPUError.unsupported("\(chosen.name) lacks VK_KHR_push_descriptor")
            }
            let family = try Self.computeQueueFamily(physical)
            let lookAheadFamily = ProcessInfo.processInfo.environment["VELVET_LOOKAHEAD_QUEUE"] == "off" ? nil
                : Self.lookAheadQueueFamily(physical, besides: family)
            let calibrates = Trace.shared != nil && family.hasTimestamps
                && Self.deviceExtensions(physical).contains("VK_EXT_calibrated_timestamps")
            let families = [family.index] + (lookAheadFamily.map { [$0] } ?? [])
            deviceHandle = try Self.createDevice(physical, queueFamilies: families,
                                                 extensions: calibrates ? ["VK_EXT_calibrated_timestamps"] : [])
            let queryCount = family.hasTimestamps ? UInt32(CommandRecorder.maxSections * 2) : nil
            let queues = try families.map { index -> GPUQueue in
                var queue: VkQueue? = nil
                vkGetDeviceQueue(deviceHandle, index, 0, &queue)
                guard let queue else { throw GPUError.unsupported("no queue in family \(index)") }
                return GPUQueue(handle: queue, family: index,
                                slots: CommandSlotPool(device: deviceHandle!, queueFamilyIndex: index, queryCount: queryCount, tally: tally))
            }
            guard let pushDescriptor = unsafeBitCast(
                vkGetDeviceProcAddr(deviceHandle, "vkCmdPushDescriptorSetKHR"), to: PFN_vkCmdPushDescriptorSetKHR?.self)
            else { throw GPUError.unsupported("vkCmdPushDescriptorSetKHR is not exported") }

            var memory = VkPhysicalDeviceMemoryProperties()
            vkGetPhysicalDeviceMemoryProperties(physical, &memory)

            self.device = chosen
            self.validationLog = log
            self.instance = instance
            self.messenger = messenger
            self.physicalDevice = physical
            self.handle = deviceHandle!
            self.mainQueue = queues[0]
            self.lookAheadQueue = queues.last!
            self.queueFamilies = families
            self.limits = properties.limits
            self.memoryProperties = memory
            self.timestampPeriod = family.hasTimestamps ? Double(properties.limits.timestampPeriod) : nil
            self.cmdPushDescriptorSet = pushDescriptor
            self.traceClock = calibrates ? Self.calibrate(deviceHandle!) : nil
            self.createdObjects = tally
            self.pipelineCache = PipelineCache(root: pipelineCacheRoot ?? PipelineCache.root(), properties: properties)
            self.pipelineCompiler = PipelineCompiler(threadLimit: compileThreads ?? PipelineCompiler.threadLimit())
            self.allocator = MemoryAllocator(device: deviceHandle!, properties: memory, tally: tally)
            self.samplers = try SamplerCache(device: deviceHandle!)
        } catch {
            if let deviceHandle { vkDestroyDevice(deviceHandle, nil) }
            if let messenger { Self.destroyMessenger(instance: instance, messenger) }
            vkDestroyInstance(instance, nil)
            throw error
        }
    }

    deinit {
        vkDeviceWaitIdle(handle)
        mainQueue.slots.destroyAll()
        if lookAheadQueue !== mainQueue { lookAheadQueue.slots.destroyAll() }
        staging.removeAll()
        buffers.destroyAll(device: handle, allocator: allocator)
        samplers.destroyAll()
        allocator.releaseAll()
        vkDestroyDevice(handle, nil)
        if let messenger { Self.destroyMessenger(instance: instance, messenger) }
        vkDestroyInstance(instance, nil)
    }

    /// Call before the process exits: no pipeline is left compiling on a worker thread while
    /// exit unloads the driver.
    public static func stopCompilingBeforeExit() { PipelineCompiler.stopAllForExit() }

    /// Waits until every kernel created so far has its pipeline; throws the first pipeline
    /// that failed to compile since the context opened. Optional: a kernel's pipeline is
    /// awaited when it is recorded, and a failure thrown by that recorder's `submit()`.
    public func finishCompiling() throws {
        try pipelineCompiler.finishCompiling()
    }

    /// The most invocations one workgroup of a 1D compute launch may have on this device.
    public var maxWorkgroupInvocations: Int {
        min(Int(limits.maxComputeWorkGroupInvocations), Int(limits.maxComputeWorkGroupSize.0))
    }

    /// Fractional bits of a linear filter's weights (VkPhysicalDeviceLimits): a filtered
    /// sample may differ from exact interpolation by up to 2^-(bits + 1) of the step.
    public var subTexelPrecisionBits: Int { Int(limits.subTexelPrecisionBits) }

    /// The longest side a 2D image may have on this device.
    public var maxImageSide: Int { Int(limits.maxImageDimension2D) }

    /// VkDeviceMemory blocks held by the sub-allocator (stays small however many images exist).
    public var memoryBlockCount: Int { allocator.blockCount }

    /// Bytes of VkDeviceMemory held by the sub-allocator (the soak watches it).
    public var memoryBlockBytes: UInt64 { allocator.blockBytes }

    /// Idle command slots, staging buffers and pooled device buffers kept for reuse (tests
    /// check they are reused).
    public var pooledObjectCounts: (commandSlots: Int, stagingBuffers: Int, deviceBuffers: Int) {
        (commandSlots.idleCount, staging.idleBufferCount, buffers.idleBufferCount)
    }

    /// Vulkan objects created so far: buffers, images, pipelines, command slots and memory
    /// blocks. A steady render adds none per frame.
    public var vulkanObjectsCreated: Int { createdObjects.total }

    /// Every Vulkan device the loader can see, without opening one.
    public static func availableDevices() throws -> [GPUDeviceInfo] {
        let instance = try createInstance(validationLog: nil)
        defer { vkDestroyInstance(instance, nil) }
        return try physicalDevices(instance).enumerated().map { describe($0.element, index: $0.offset) }
    }

    /// The queue `lane`'s recordings go to.
    func queue(for lane: GPULane) -> GPUQueue { lane == .main ? mainQueue : lookAheadQueue }

    /// The look-ahead has a queue of its own, in a second compute family.
    public var hasLookAheadQueue: Bool { lookAheadQueue !== mainQueue }

    // MARK: - Creation steps

    private static func createInstance(validationLog: ValidationLog?) throws -> VkInstance {
        CPUDriverThreads.configure()
        let arena = Arena()
        var extensions: [String] = []
        var layers: [String] = []
        var next: UnsafeRawPointer? = nil
        if let validationLog {
            guard instanceLayers().contains("VK_LAYER_KHRONOS_validation") else {
                throw OpenFileLimit.blamed(otherwise: .validationLayerMissing)
            }
            layers.append("VK_LAYER_KHRONOS_validation")
            extensions.append("VK_EXT_debug_utils")
            var features = VkValidationFeaturesEXT()
            features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT
            features.enabledValidationFeatureCount = 1
            features.pEnabledValidationFeatures = UnsafePointer(arena.array([VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT]))
            // Also catch messages from vkCreateInstance/vkDestroyInstance themselves.
            var messengerInfo = messengerCreateInfo(log: validationLog)
            messengerInfo.pNext = UnsafeRawPointer(arena.pointer(to: features))
            next = UnsafeRawPointer(arena.pointer(to: messengerInfo))
        }
        var application = VkApplicationInfo()
        application.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO
        application.pApplicationName = arena.cString("velvet")
        application.pEngineName = arena.cString("velvet")
        application.apiVersion = velvet_vk_make_api_version(0, 1, 2, 0)

        var info = VkInstanceCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO
        info.pNext = next
        info.pApplicationInfo = UnsafePointer(arena.pointer(to: application))
        info.enabledLayerCount = UInt32(layers.count)
        info.ppEnabledLayerNames = arena.cStrings(layers)
        info.enabledExtensionCount = UInt32(extensions.count)
        info.ppEnabledExtensionNames = arena.cStrings(extensions)
        var instance: VkInstance? = nil
        let result = vkCreateInstance(&info, nil, &instance)
        if result == VK_ERROR_INCOMPATIBLE_DRIVER { throw OpenFileLimit.blamed(otherwise: .noDevice) }
        if result == VK_ERROR_LAYER_NOT_PRESENT { throw OpenFileLimit.blamed(otherwise: .validationLayerMissing) }
        try vkCheck(result, "vkCreateInstance")
        guard let instance else { throw GPUError.noVulkan("vkCreateInstance returned no instance") }
        return instance
    }

    private static func messengerCreateInfo(log: ValidationLog) -> VkDebugUtilsMessengerCreateInfoEXT {
        var info = VkDebugUtilsMessengerCreateInfoEXT()
        info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT
        info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT.rawValue
            | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT.rawValue
        info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT.rawValue
            | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT.rawValue
            | VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT.rawValue
        info.pfnUserCallback = ValidationLog.callback
        // The log is owned by the context, which destroys the messenger before releasing it.
        info.pUserData = Unmanaged.passUnretained(log).toOpaque()
        return info
    }

    private static func createMessenger(instance: VkInstance, log: ValidationLog) throws -> VkDebugUtilsMessengerEXT {
        guard let create = unsafeBitCast(vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"),
                                         to: PFN_vkCreateDebugUtilsMessengerEXT?.self) else {
            throw GPUError.validationLayerMissing
        }
        var info = messengerCreateInfo(log: log)
        var messenger: VkDebugUtilsMessengerEXT? = nil
        try vkCheck(create(instance, &info, nil, &messenger), "vkCreateDebugUtilsMessengerEXT")
        return messenger!
    }

    private static func destroyMessenger(instance: VkInstance, _ messenger: VkDebugUtilsMessengerEXT) {
        if let destroy = unsafeBitCast(vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"),
                                       to: PFN_vkDestroyDebugUtilsMessengerEXT?.self) {
            destroy(instance, messenger, nil)
        }
    }

    private static func instanceLayers() -> Set<String> {
        var count: UInt32 = 0
        vkEnumerateInstanceLayerProperties(&count, nil)
        var layers = [VkLayerProperties](repeating: VkLayerProperties(), count: Int(count))
        vkEnumerateInstanceLayerProperties(&count, &layers)
        return Set(layers.prefix(Int(count)).map { string(fromCTuple: $0.layerName) })
    }

    private static func physicalDevices(_ instance: VkInstance) throws -> [VkPhysicalDevice] {
        var count: UInt32 = 0
        try vkCheck(vkEnumeratePhysicalDevices(instance, &count, nil), "vkEnumeratePhysicalDevices")
        var devices = [VkPhysicalDevice?](repeating: nil, count: Int(count))
        try vkCheck(vkEnumeratePhysicalDevices(instance, &count, &devices), "vkEnumeratePhysicalDevices")
        let found = devices.prefix(Int(count)).compactMap { $0 }
        guard !found.isEmpty else { throw OpenFileLimit.blamed(otherwise: .noDevice) }
        return found
    }

    private static func describe(_ physical: VkPhysicalDevice, index: Int) -> GPUDeviceInfo {
        var driver = VkPhysicalDeviceDriverProperties()
        driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES
        var properties2 = VkPhysicalDeviceProperties2()
        properties2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2
        let properties = withUnsafeMutablePointer(to: &driver) { driverPointer -> VkPhysicalDeviceProperties in
            properties2.pNext = UnsafeMutableRawPointer(driverPointer)
            vkGetPhysicalDeviceProperties2(physical, &properties2)
            return properties2.properties
        }
        var memory = VkPhysicalDeviceMemoryProperties()
        vkGetPhysicalDeviceMemoryProperties(physical, &memory)
        let heaps = withUnsafeBytes(of: memory.memoryHeaps) { Array($0.bindMemory(to: VkMemoryHeap.self).prefix(Int(memory.memoryHeapCount))) }
        let deviceLocal = heaps.filter { $0.flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT.rawValue != 0 }.map(\.size).reduce(0, +)
        let kind: GPUDeviceInfo.Kind
        switch properties.deviceType {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: kind = .discrete
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: kind = .integrated
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: kind = .virtual
        case VK_PHYSICAL_DEVICE_TYPE_CPU: kind = .cpu
        default: kind = .other
        }
        let api = properties.apiVersion
        let driverName = [string(fromCTuple: driver.driverName), string(fromCTuple: driver.driverInfo)]
            .filter { !$0.isEmpty }.joined(separator: " ")
        return GPUDeviceInfo(
            index: index, name: string(fromCTuple: properties.deviceName), kind: kind, driver: driverName,
            apiVersion: "\(velvet_vk_api_major(api)).\(velvet_vk_api_minor(api)).\(velvet_vk_api_patch(api))",
            deviceLocalMemoryBytes: deviceLocal)
    }

    private static func deviceExtensions(_ physical: VkPhysicalDevice) -> Set<String> {
        var count: UInt32 = 0
        vkEnumerateDeviceExtensionProperties(physical, nil, &count, nil)
        var extensions = [VkExtensionProperties](repeating: VkExtensionProperties(), count: Int(count))
        vkEnumerateDeviceExtensionProperties(physical, nil, &count, &extensions)
        return Set(extensions.prefix(Int(count)).map { string(fromCTuple: $0.extensionName) })
    }

    /// The device's queue families, by index.
    private static func queueFamilies(_ physical: VkPhysicalDevice) -> [VkQueueFamilyProperties] {
        var count: UInt32 = 0
        vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, nil)
        var families = [VkQueueFamilyProperties](repeating: VkQueueFamilyProperties(), count: Int(count))
        vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, &families)
        return Array(families.prefix(Int(count)))
    }

    private static func computeQueueFamily(_ physical: VkPhysicalDevice) throws -> (index: UInt32, hasTimestamps: Bool) {
        let compute = queueFamilies(physical).enumerated().filter {
            $0.element.queueFlags & VK_QUEUE_COMPUTE_BIT.rawValue != 0
        }
        // Prefer a family with timestamps, then one that also does graphics (the main queue).
        guard let best = compute.max(by: { lhs, rhs in
            (lhs.element.timestampValidBits > 0 ? 1 : 0, lhs.element.queueFlags & VK_QUEUE_GRAPHICS_BIT.rawValue != 0 ? 1 : 0)
                < (rhs.element.timestampValidBits > 0 ? 1 : 0, rhs.element.queueFlags & VK_QUEUE_GRAPHICS_BIT.rawValue != 0 ? 1 : 0)
        }) else { throw GPUError.unsupported("no compute queue") }
        return (UInt32(best.offset), best.element.timestampValidBits > 0)
    }

    /// A compute family other than the main one, for the look-ahead's queue: with timestamps
    /// where the main one has them (its sections are timed too), compute-only first (NVIDIA's
    /// asynchronous compute family). Nil when the device has none (lavapipe: one family).
    private static func lookAheadQueueFamily(_ physical: VkPhysicalDevice, besides main: (index: UInt32, hasTimestamps: Bool))
        -> UInt32? {
        let candidates = queueFamilies(physical).enumerated().filter { index, family in
            UInt32(index) != main.index && family.queueCount > 0 && family.queueFlags & VK_QUEUE_COMPUTE_BIT.rawValue != 0
                && (!main.hasTimestamps || family.timestampValidBits > 0)
        }
        let computeOnly = candidates.first { $0.element.queueFlags & VK_QUEUE_GRAPHICS_BIT.rawValue == 0 }
        return (computeOnly ?? candidates.first).map { UInt32($0.offset) }
    }

    /// A device timestamp and CLOCK_MONOTONIC (what `DispatchTime` reads on Linux) at one instant.
    private static func calibrate(_ device: VkDevice) -> (ticks: UInt64, nanoseconds: UInt64)? {
        guard let calibrated = unsafeBitCast(vkGetDeviceProcAddr(device, "vkGetCalibratedTimestampsEXT"),
                                             to: PFN_vkGetCalibratedTimestampsEXT?.self) else { return nil }
        var infos = [VK_TIME_DOMAIN_DEVICE_EXT, VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT].map { domain in
            var info = VkCalibratedTimestampInfoEXT()
            info.sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT
            info.timeDomain = domain
            return info
        }
        var values: [UInt64] = [0, 0]
        var deviation: UInt64 = 0
        guard calibrated(device, 2, &infos, &values, &deviation) == VK_SUCCESS else { return nil }
        return (values[0], values[1])
    }

    private static func createDevice(_ physical: VkPhysicalDevice, queueFamilies: [UInt32], extensions extra: [String]) throws -> VkDevice {
        let arena = Arena()
        var supported = VkPhysicalDeviceFeatures()
        vkGetPhysicalDeviceFeatures(physical, &supported)
        guard supported.shaderStorageImageWriteWithoutFormat != 0 else {
            throw GPUError.unsupported("shaderStorageImageWriteWithoutFormat")
        }
        var enabled = VkPhysicalDeviceFeatures()
        enabled.shaderStorageImageWriteWithoutFormat = VkBool32(VK_TRUE)

        let priority: Float = 1
        let queueInfos = queueFamilies.map { family in
            var queueInfo = VkDeviceQueueCreateInfo()
            queueInfo.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO
            queueInfo.queueFamilyIndex = family
            queueInfo.queueCount = 1
            queueInfo.pQueuePriorities = UnsafePointer(arena.pointer(to: priority))
            return queueInfo
        }

        let extensions = ["VK_KHR_push_descriptor"] + extra
        var info = VkDeviceCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO
        info.queueCreateInfoCount = UInt32(queueInfos.count)
        info.pQueueCreateInfos = UnsafePointer(arena.array(queueInfos))
        info.enabledExtensionCount = UInt32(extensions.count)
        info.ppEnabledExtensionNames = arena.cStrings(extensions)
        info.pEnabledFeatures = UnsafePointer(arena.pointer(to: enabled))
        var device: VkDevice? = nil
        try vkCheck(vkCreateDevice(physical, &info, nil, &device), "vkCreateDevice")
        return device!
    }
}
