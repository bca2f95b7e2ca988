import Foundation
import VelvetGPU

/// `velvet devices [--json]`: every Vulkan device, and which one would be used.
enum DevicesCommand {
    static func run(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        let request = arguments.value("--device") ?? ProcessInfo.processInfo.environment["VELVET_DEVICE"]
        let json = arguments.flag("--json")
        try arguments.finish()
        let devices = try GPUContext.availableDevices()
        let chosen = try DeviceSelector.choose(from: devices, request: request)
        if json {
            let entries = devices.map { device -> [String: Any] in
                ["index": device.index, "name": device.name, "type": device.kind.rawValue, "driver": device.driver,
                 "api": device.apiVersion, "memoryMiB": device.deviceLocalMemoryBytes >> 20, "selected": device.index == chosen.index]
            }
            let data = try JSONSerialization.data(withJSONObject: entries, options: [.prettyPrinted, .sortedKeys])
            print(String(decoding: data, as: UTF8.self))
            return
        }
        for device in devices {
            let marker = device.index == chosen.index ? "*" : " "
            print("\(marker) \(device.index): \(device.name) [\(device.kind.rawValue)] Vulkan \(device.apiVersion), "
                  + "driver \(device.driver), \(device.deviceLocalMemoryBytes >> 20) MiB")
        }
        print("velvet would use device \(chosen.index): \(chosen.name)")
    }
}
