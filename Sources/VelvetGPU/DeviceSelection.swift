/// What a user needs to know to pick a Vulkan device.
public struct GPUDeviceInfo: Sendable, Equatable {
    public enum Kind: String, Sendable { case discrete, integrated, virtual, cpu, other }

    public var index: Int
    public var name: String
    public var kind: Kind
    public var driver: String
    public var apiVersion: String
    public var deviceLocalMemoryBytes: UInt64

    public init(index: Int, name: String, kind: Kind, driver: String, apiVersion: String, deviceLocalMemoryBytes: UInt64) {
        (self.index, self.name, self.kind, self.driver) = (index, name, kind, driver)
        (self.apiVersion, self.deviceLocalMemoryBytes) = (apiVersion, deviceLocalMemoryBytes)
    }

    public var summary: String { "\(index): \(name) (\(kind.rawValue))" }
}

/// Chooses a device: an explicit request wins (all digits: an index, never part of a name;
/// otherwise a case-insensitive part of a name); without one a discrete GPU, else
/// integrated, else virtual, else a CPU device (lavapipe).
public enum DeviceSelector {
    public static func choose(from devices: [GPUDeviceInfo], request: String?) throws -> GPUDeviceInfo {
        guard !devices.isEmpty else { throw GPUError.noDevice }
        if let request = request?.trimmingWhitespace(), !request.isEmpty {
            if request.allSatisfy(\.isASCIIDigit) {
                guard let index = Int(request), let device = devices.first(where: { $0.index == index }) else {
                    throw GPUError.deviceIndexOutOfRange(index: request, available: devices.map(\.summary))
                }
                return device
            }
            if let device = devices.first(where: { $0.name.lowercased().contains(request.lowercased()) }) { return device }
            throw GPUError.deviceNotFound(request: request, available: devices.map(\.summary))
        }
        let preference: [GPUDeviceInfo.Kind] = [.discrete, .integrated, .virtual, .cpu, .other]
        return devices.min { lhs, rhs in
            (preference.firstIndex(of: lhs.kind)!, lhs.index) < (preference.firstIndex(of: rhs.kind)!, rhs.index)
        }!
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isWholeNumber }
}

extension String {
    func trimmingWhitespace() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
