import Foundation

/// The temporary files (`.NAME.velvet-partial-PID`) an output is written to before it is
/// renamed into place. A SIGKILLed process leaves its partial behind; the PID in the name
/// tells whether its writer is still alive.
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
            if isLiveVelvet(partial.pid) { live = partial.pid } else { unlink(partial.path) }
        }
        return live
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
            if isLiveVelvet(pid) { live = pid } else { unlink(directory + "/" + name) }
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
