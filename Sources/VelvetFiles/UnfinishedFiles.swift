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
    /// Outputs written as they go (standard output, a FIFO), by the name the user gave: an end
    /// of the process ends what they were sent, which nothing can take back.
    private var streams: [String: Int] = [:]

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

    /// Forgets `path` (it was committed or deleted).
    public func remove(_ path: String) {
        lock.withLock { _ = paths.remove(path) }
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
        let removed = paths.filter { unlink($0) == 0 }.count
        for path in paths { rmdir(path) } // a scratch file's own folder, emptied above
        paths.removeAll()
        return Sweep(removed: removed, cutStreams: streams.keys.sorted())
    }
}
