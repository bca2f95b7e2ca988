import CVulkan

/// Errors a user can act on. Programming errors (a kernel bound to the wrong resources)
/// trap instead; everything that depends on the machine or the input throws one of these.
public enum GPUError: Error, CustomStringConvertible, Equatable {
    case noVulkan(String)
    case noDevice
    /// No device or layer, with the open-file limit this low: the loader could not open them.
    case openFileLimit(Int)
    case deviceNotFound(request: String, available: [String])
    case deviceIndexOutOfRange(index: String, available: [String])
    case validationLayerMissing
    case unsupported(String)
    case outOfMemory(String)
    case invalidArgument(String)
    case vulkan(call: String, result: Int32)

    public var description: String {
        switch self {
        case .noVulkan(let detail):
            return "Vulkan is not available (\(detail)): install libvulkan1 and a driver (mesa-vulkan-drivers for the lavapipe CPU device)"
        case .noDevice:
            return "no Vulkan device found: install a GPU driver or mesa-vulkan-drivers (lavapipe), or check VK_DRIVER_FILES"
        case .openFileLimit(let limit):
            return "no Vulkan device could be loaded with the open-file limit at \(limit) (ulimit -n): "
                + "raise it to \(OpenFileLimit.driverNeeds) or more"
        case .deviceNotFound(let request, let available):
            return "no Vulkan device matches '\(request)' (VELVET_DEVICE/--device takes an index or part of a name); available: "
                + available.joined(separator: "; ")
        case .deviceIndexOutOfRange(let index, let available):
            return "there is no Vulkan device \(index) (an all-digit VELVET_DEVICE/--device is an index); available: "
                + available.joined(separator: "; ")
        case .validationLayerMissing:
            return "VELVET_VALIDATION is set but VK_LAYER_KHRONOS_validation is not installed (apt-get install vulkan-validationlayers)"
        case .unsupported(let what): return "unsupported on this device: \(what)"
        case .outOfMemory(let what): return "out of GPU memory: \(what)"
        case .invalidArgument(let what): return what
        case .vulkan(let call, let result): return "\(call) failed with VkResult \(result)"
        }
    }
}

/// Throws unless `result` is VK_SUCCESS; memory exhaustion becomes `.outOfMemory`.
@inline(__always)
func vkCheck(_ result: VkResult, _ call: @autoclosure () -> String) throws {
    guard result != VK_SUCCESS else { return }
    if result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY {
        throw GPUError.outOfMemory(call())
    }
    throw GPUError.vulkan(call: call(), result: result.rawValue)
}
