import CVulkan
import Foundation

/// Collects every message the Khronos validation layer reports through the debug messenger.
/// Tests fail on any; the CLI prints them. Thread-safe: the layer may call from any thread.
public final class ValidationLog: @unchecked Sendable {
    private let lock = NSLock()
    private var collected: [String] = []

    public init() {}

    public var messages: [String] { lock.withLock { collected } }

    /// Returns and forgets the messages collected so far.
    public func drain() -> [String] {
        lock.withLock {
            defer { collected.removeAll() }
            return collected
        }
    }

    func append(_ message: String) {
        lock.withLock { collected.append(message) }
        if ProcessInfo.processInfo.environment["VELVET_VALIDATION_ECHO"] == "1" {
            FileHandle.standardError.write(Data("velvet: validation: \(message)\n".utf8))
        }
    }

    /// The C callback; `userData` is an unretained ValidationLog that outlives the messenger.
    static let callback: PFN_vkDebugUtilsMessengerCallbackEXT = { severity, types, data, userData in
        guard let userData, let data else { return VkBool32(VK_FALSE) }
        // Loader chatter (general messages) is not a validation finding.
        let isFinding = (types & (VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT.rawValue
                                  | VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT.rawValue)) != 0
        if isFinding {
            let log = Unmanaged<ValidationLog>.fromOpaque(userData).takeUnretainedValue()
            log.append(data.pointee.pMessage.map { String(cString: $0) } ?? "(no message)")
        }
        return VkBool32(VK_FALSE)
    }
}
