import Foundation

/// How many worker threads lavapipe (llvmpipe) runs compute dispatches on.
///
/// llvmpipe hands each worker an equal share of a dispatch's workgroups, in order, and the
/// dispatch ends when the last share does; its default is one worker per core. A share held
/// up (by the encoder's threads on the same cores, or by a part of the image that costs more,
/// such as the face in a region around it) then holds up the whole dispatch while the other
/// cores wait. With two workers per core the shares are half as long and the operating system
/// runs whichever are ready, so the cores stay busy (docs/PERFORMANCE.md: a 720p render about
/// 4-5 % faster on a 2-core host, the same bytes). The driver reads `LP_NUM_THREADS` when the
/// first Vulkan instance opens it; a value the user set is left alone.
enum CPUDriverThreads {
    static let variable = "LP_NUM_THREADS"
    /// llvmpipe workers per usable core.
    static let workersPerCore = 2

    /// The value to set, or nil to leave the driver's default: the variable is set already,
    /// or one core (llvmpipe then runs dispatches on the calling thread).
    static func value(environment: [String: String], cores: Int) -> String? {
        guard environment[variable] == nil, cores > 1 else { return nil }
        return String(workersPerCore * cores)
    }

    /// Sets the variable, once per process, before the first instance is created.
    static func configure() { _ = chosen }

    /// What Velvet set the variable to (nil: left as it was).
    static let chosen: String? = {
        guard let value = value(environment: ProcessInfo.processInfo.environment, cores: usableCores),
              setenv(variable, value, 0) == 0 else { return nil }
        return value
    }()

    /// The cores this process may run on: its affinity mask (`taskset`, a Slurm or Kubernetes
    /// CPU set), at most the processors online (a default mask may list every possible CPU).
    static var usableCores: Int {
        let online = ProcessInfo.processInfo.activeProcessorCount
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        return min(allowedCores(status: status) ?? online, online)
    }

    /// The bits set in `Cpus_allowed:` (hex words, comma-separated) of a /proc status file.
    static func allowedCores(status: String) -> Int? {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") }) else { return nil }
        var count = 0
        for word in line.dropFirst("Cpus_allowed:".count).split(separator: ",") {
            guard let bits = UInt32(word.trimmingCharacters(in: .whitespaces), radix: 16) else { return nil }
            count += bits.nonzeroBitCount
        }
        return count > 0 ? count : nil
    }
}
