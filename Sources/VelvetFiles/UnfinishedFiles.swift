import Foundation

/// The files this process must not leave behind: partial outputs being written and scratch
/// files it deletes when done. The signal path deletes them all just before the process
/// exits. Creating, committing and deleting such a file happen under this registry's lock,
/// and the signal path keeps the lock until the process is gone, so no file is created or
/// renamed into place after the sweep.
public final class UnfinishedFiles: @unchecked Sendable {
    public static let shared = UnfinishedFiles()

    private let lock = NSRecursiveLock()
    private var paths: Set<String> = []
    /// A descriptor open on a registered file, where there is one: it finds the file after its
    /// folder was renamed (`unlink(_:following:)`).
    private var descriptors: [String: Int32] = [:]
    /// Outputs written as they go (standard output, a FIFO), by the name the user gave: an end
    /// of the process ends what they were sent, which nothing can take back.
    private var streams: [String: Int] = [:]
    /// Child processes writing registered files (`bench media`'s ffmpeg): the sweep ends them
    /// first, or one would go on writing its file after the sweep deleted it.
    private var writers: Set<pid_t> = []

    /// Registers `path`, then runs `body` (which may create it) under the lock.
    public func adding<T>(_ path: String, _ body: () throws -> T) rethrows -> T {
        try lock.withLock {
            paths.insert(path)
            return try body()
        }
    }

    /// Runs `body` (a rename into place, a file being created) so no sweep happens meanwhile.
    public func exclusively<T>(_ body: () throws -> T) rethrows -> T {
        try lock.withLock(body)
    }

    /// Notes a descriptor open on the registered `path` (until `remove`).
    public func locate(_ path: String, by descriptor: Int32) {
        lock.withLock { descriptors[path] = descriptor }
    }

    /// Forgets `path` (it was committed or deleted).
    public func remove(_ path: String) {
        lock.withLock {
            paths.remove(path)
            descriptors[path] = nil
        }
    }

    /// Deletes the file at `path` or, where a folder above it was renamed meanwhile, the same
    /// file where `descriptor` (open on it) now finds it. Whether a file was deleted.
    @discardableResult
    public static func unlink(_ path: String, following descriptor: Int32?) -> Bool {
        if Glibc.unlink(path) == 0 { return true }
        guard errno == ENOENT, let descriptor, let moved = currentPath(of: descriptor) else { return false }
        return Glibc.unlink(moved) == 0
    }

    /// Where the file open on `descriptor` is now, if it still has a name: the kernel's link
    /// for it, checked to be the same file.
    static func currentPath(of descriptor: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/fd/\(descriptor)", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let path = String(cString: buffer)
        var open = stat(), named = stat()
        guard fstat(descriptor, &open) == 0, lstat(path, &named) == 0, open.st_dev == named.st_dev, open.st_ino == named.st_ino else {
            return nil
        }
        return path
    }

    /// Starts a child process that writes a registered file (`start` runs it), so no sweep
    /// comes between its start and its registration.
    public func startingWriter(_ start: () throws -> pid_t) rethrows {
        try lock.withLock { _ = writers.insert(try start()) }
    }

    /// Forgets a writer that has exited.
    public func writerEnded(_ process: pid_t) {
        lock.withLock { _ = writers.remove(process) }
    }

    /// Whether `process` still runs: neither gone nor a zombie (state Z or X in /proc).
    private static func isRunning(_ process: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(process)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state != "Z" && state != "X"
    }

    /// Notes that `name`, a stream, is being sent an output (until `streamEnded`).
    public func streaming(_ name: String) {
        lock.withLock { streams[name, default: 0] += 1 }
    }

    public func streamEnded(_ name: String) {
        lock.withLock {
            streams[name, default: 1] -= 1
            if streams[name] == 0 { streams[name] = nil }
        }
    }

    /// What the sweep did: files deleted, and the streams left ending where they were cut.
    public struct Sweep: Sendable {
        public let removed: Int
        public let cutStreams: [String]
    }

    /// Deletes every registered file and keeps the lock, so nothing is created or committed
    /// until the process exits. Only for the path that ends the process. Returns what it
    /// deleted and the streams it cut, or nil when the lock stayed taken for `patience` seconds (a commit
    /// that cannot finish): then nothing is deleted, and the process still ends.
    @discardableResult
    public func deleteAllBeforeExit(patience: TimeInterval = 10) -> Sweep? {
        guard lock.lock(before: Date(timeIntervalSinceNow: patience)) else { return nil }
        // Killed (a signal it could catch would let ffmpeg finish its file) and waited for
        // (not reaped: Foundation's `Process` does that): dead, it writes nothing more.
        for writer in writers { kill(writer, SIGKILL) }
        let deadline = Date(timeIntervalSinceNow: 5)
        while writers.contains(where: Self.isRunning), Date() < deadline { usleep(1000) }
        writers.removeAll()
        let removed = paths.filter { Self.unlink($0, following: descriptors[$0]) }.count
        for path in paths { rmdir(path) } // a scratch file's own folder, emptied above
        paths.removeAll()
        descriptors.removeAll()
        return Sweep(removed: removed, cutStreams: streams.keys.sorted())
    }
}
