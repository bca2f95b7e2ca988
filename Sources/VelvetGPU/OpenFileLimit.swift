import Glibc

/// The process's open-file limit, which a Vulkan driver needs a few dozen of to load.
public enum OpenFileLimit {
    /// Below this soft limit a missing device is blamed on the limit as well (lavapipe: with
    /// `ulimit -n 12` no device loads, with 16 the render's own files run out, 20 renders).
    public static let driverNeeds = 64
    private static let nofile = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)

    /// Raises the soft limit to the hard one, as Go's runtime does at start: the soft default
    /// (1024) is a guard against leaks in old select() code, which nothing here uses.
    public static func raise() {
        var limit = rlimit()
        guard getrlimit(nofile, &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(nofile, &limit)
    }

    /// The soft limit now, where it is below what the driver needs (nil otherwise).
    public static var tooLow: Int? {
        var limit = rlimit()
        guard getrlimit(nofile, &limit) == 0, limit.rlim_cur < rlim_t(driverNeeds) else { return nil }
        return Int(limit.rlim_cur)
    }

    /// `error` (no device, or no validation layer), or `.openFileLimit` where the limit is too
    /// low for the loader to have opened what it looked for.
    static func blamed(otherwise error: GPUError) -> GPUError {
        tooLow.map { .openFileLimit($0) } ?? error
    }
}
