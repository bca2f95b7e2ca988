import Foundation
import VelvetGPU
import VelvetMedia

/// `velvet version` / `velvet --version`: what a bug report needs. The git describe is
/// stamped at build time (Tools/VersionStamp); a Vulkan device that cannot be found is
/// reported, not an error.
enum VersionCommand {
    /// Velvet's release version.
    static let release = "0.1.0"

    static func run(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        let request = arguments.value("--device") ?? ProcessInfo.processInfo.environment["VELVET_DEVICE"]
        try arguments.finish()
        print("velvet \(release) (git \(BuildStamp.gitDescribe))")
        do {
            let device = try DeviceSelector.choose(from: try GPUContext.availableDevices(), request: request)
            print("Vulkan device: \(device.name) [\(device.kind.rawValue)] Vulkan \(device.apiVersion), driver \(device.driver)")
        } catch {
            print("Vulkan device: none (\(ErrorMessage.text(for: error)))")
        }
        let ffmpeg = FFmpegLibraries.versions
        print("FFmpeg \(ffmpeg.release): \(ffmpeg.libraries.joined(separator: ", "))")
    }
}
