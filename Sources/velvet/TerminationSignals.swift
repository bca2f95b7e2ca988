import Dispatch
import Foundation
import VelvetFiles

/// SIGINT, SIGTERM, SIGHUP and SIGQUIT (and SIGUSR1, SIGUSR2, SIGALRM, whose default is to
/// end the process too) end every command alike and at once, whatever it is
/// doing: the files it was writing (and its scratch files) are deleted, one line is printed
/// and the process exits 128+N (130, 143, 129, 131). Outputs already moved into place stay,
/// so an interrupted `batch` keeps what it finished and starts nothing more. Handled for the
/// whole process, so no command needs to poll for cancellation.
enum TerminationSignals {
    static let names: [Int32: String] = [SIGINT: "SIGINT", SIGTERM: "SIGTERM", SIGHUP: "SIGHUP", SIGQUIT: "SIGQUIT",
                                         // Also deadly by default, so they too must not leave a partial behind.
                                         SIGUSR1: "SIGUSR1", SIGUSR2: "SIGUSR2", SIGALRM: "SIGALRM"]

    /// Call once, before any work.
    static func install() {
        // A closed pipe (`velvet render … -o - | head -c 1000`) is a failed write, reported in
        // one line with exit 1 as ffmpeg does, not a silent death by SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        for (number, name) in names {
            // A signal the process was started with ignored (`nohup`, a background job of a
            // script) stays ignored, as the shell asked.
            let previous = signal(number, SIG_IGN)
            if unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) { continue }
            // Ignored as a signal (no default death, no runtime crash report for SIGQUIT);
            // delivered to the dispatch source instead.
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { terminate(signal: number, name: name) }
            source.resume()
            Sources.shared.keep(source)
        }
    }

    private static func terminate(signal number: Int32, name: String) -> Never {
        // Waits for a commit under way: an output is either removed or whole, and the line
        // says which (a signal during the last rename leaves the finished output in place).
        let sweep = UnfinishedFiles.shared.deleteAllBeforeExit()
        let code = 128 + number
        let outcome = sweep.map(describe)
            ?? "a commit under way did not finish: an unfinished .velvet-partial file may be left (the next run removes it)"
        FailureReport.shared.print(line: "velvet: interrupted (\(name)); \(outcome)", message: "interrupted (\(name))", exitCode: code)
        _exit(code)
    }

    /// What the signal left: a stream (`-o -`, a FIFO) keeps what it was sent, cut where it was.
    private static func describe(_ sweep: UnfinishedFiles.Sweep) -> String {
        let streams = sweep.cutStreams.map { $0 == "-" ? "standard output" : $0 }
        guard !streams.isEmpty else { return sweep.removed > 0 ? "unfinished output removed" : "no unfinished output was left" }
        let cut = "what was sent to \(streams.joined(separator: " and ")) ends there"
        return sweep.removed > 0 ? "unfinished output removed; \(cut)" : cut
    }

    /// Keeps the dispatch sources alive for the life of the process.
    private final class Sources: @unchecked Sendable {
        static let shared = Sources()
        private let lock = NSLock()
        private var sources: [DispatchSourceSignal] = []
        func keep(_ source: DispatchSourceSignal) { lock.withLock { sources.append(source) } }
    }
}
