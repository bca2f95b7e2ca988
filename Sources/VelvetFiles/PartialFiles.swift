import Foundation

/// The temporary files (`.NAME.velvet-partial-PID`) an output is written to before it is
/// renamed into place. Its writer creates it and holds an exclusive `flock` on it until the
/// commit (`claim`), so another process sees a live writer whatever the writer's name or PID
/// namespace (two containers sharing a volume may both be PID 1); a SIGKILLed writer's lock
/// goes with it and its partial is stale. The PID in the name is also asked, for the
/// moment between a partial's creation and its lock.
public enum PartialFiles {
    static let marker = ".velvet-partial-"
    /// Room for the longest PID (Linux allows up to 2^22; 10 digits covers any pid_t).
    static let pidDigits = 10

    public static func path(for output: String, pid: Int32 = getpid()) -> String {
        directory(of: output) + "/" + stem(of: output) + "\(pid)"
    }

    /// Partial files of `output` on disk, with the PID in each name.
    public static func existing(of output: String) -> [(path: String, pid: Int32)] {
        let directory = directory(of: output), stem = stem(of: output)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { name in
            guard name.hasPrefix(stem), let pid = Int32(name.dropFirst(stem.count)) else { return nil }
            return (directory + "/" + name, pid)
        }
    }

    /// Deletes the partials of `output` whose writer is gone; returns the PID of a live velvet
    /// process still writing it, if there is one (its partial is left alone).
    public static func clearStale(of output: String) -> Int32? {
        var live: Int32?
        for partial in existing(of: output) {
            if isLive(partial.path, pid: partial.pid) { live = partial.pid } else { unlink(partial.path) }
        }
        return live
    }

    /// Creates `partial` for this process (never through a link or over a file) and locks it;
    /// the descriptor holds the lock until it is closed. A partial already at the name is a
    /// dead writer's (or something planted there) and is removed, unless its writer is live:
    /// then `output` is busy.
    ///
    /// With `othersOf` (the file `partial` is for), a live writer's partial of that file under
    /// another PID found once this one is locked makes it busy as well: two renders started
    /// together both passed the command's first check, made before either had a partial (with
    /// `-y` both succeeded, the later replacing the earlier). Of two that create theirs at the
    /// same instant both may refuse; neither succeeds falsely. Left out for a sequence's frames
    /// (a folder listing each).
    public static func claim(_ partial: String, output: String, othersOf file: String? = nil) throws -> Int32 {
        for _ in 0..<3 {
            let descriptor = open(partial, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if descriptor >= 0 {
                // New and unlinked by no one: a checker holding its brief shared lock is waited for.
                while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
                if let file, let other = existing(of: file).first(where: { $0.path != partial && isLive($0.path, pid: $0.pid) }) {
                    unlink(partial)
                    close(descriptor)
                    throw OutputFileError.busy(path: output, pid: other.pid)
                }
                return descriptor
            }
            guard errno == EEXIST else { throw OutputFileError.cannotWrite(path: output, reason: String(cString: strerror(errno))) }
            let pid = Int32(partial[(partial.range(of: marker, options: .backwards)?.upperBound ?? partial.endIndex)...]) ?? 0
            if isLive(partial, pid: pid) { throw OutputFileError.busy(path: output, pid: pid) }
            unlink(partial)
        }
        throw OutputFileError.cannotWrite(path: output, reason: "its temporary file \(partial) keeps coming back")
    }

    /// A partial whose writer is alive: its lock is held, or its PID is a velvet process other
    /// than this one that has it open (between creating it and locking it). A velvet process
    /// that got a killed writer's PID again does not have the partial open.
    static func isLive(_ path: String, pid: Int32) -> Bool {
        isLocked(path) || (isLiveVelvet(pid) && holdsOpen(pid, path) != false)
    }

    /// Whether process `pid` has the file at `path` open (its /proc fd links, by device and
    /// inode); nil where that cannot be read (another user's process).
    static func holdsOpen(_ pid: Int32, _ path: String) -> Bool? {
        var target = stat()
        guard lstat(path, &target) == 0 else { return false }
        let folder = "/proc/\(pid)/fd"
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return nil }
        return descriptors.contains { descriptor in
            var info = stat()
            return stat(folder + "/" + descriptor, &info) == 0 && info.st_dev == target.st_dev && info.st_ino == target.st_ino
        }
    }

    /// Whether another open of `path` holds a `flock` on it (a link is not followed: no writer's).
    static func isLocked(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return flock(descriptor, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK
    }

    /// `clearStale` for every output in `directory` whose name `matches` (the frames of an image
    /// sequence, whose count is not known before the render): the partials of dead writers are
    /// deleted; returns the PID of a live velvet process writing one of them, if any. (A name
    /// long enough to be shortened in its partial's name is not recognised.)
    public static func clearStale(in directory: String, matching matches: (String) -> Bool) -> Int32? {
        var live: Int32?
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name.hasPrefix(".") {
            guard let marked = name.range(of: marker, options: .backwards), let pid = Int32(name[marked.upperBound...]) else { continue }
            let output = String(name[name.index(after: name.startIndex)..<marked.lowerBound])
            guard matches(output) else { continue }
            if isLive(directory + "/" + name, pid: pid) { live = pid } else { unlink(directory + "/" + name) }
        }
        return live
    }

    /// Another process, alive, that is `velvet` (a PID reused by anything else is not a writer).
    static func isLiveVelvet(_ pid: Int32) -> Bool {
        guard pid > 0, pid != getpid(), kill(pid, 0) == 0 || errno == EPERM else { return false }
        guard let name = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8) else { return true }
        return name.hasPrefix("velvet")
    }

    private static func stem(of output: String) -> String {
        SiblingName.hidden(URL(fileURLWithPath: output).lastPathComponent, suffix: marker, reserve: pidDigits)
    }

    static func directory(of output: String) -> String {
        URL(fileURLWithPath: output).deletingLastPathComponent().path
    }
}
