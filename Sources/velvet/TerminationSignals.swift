import Foundation
import Synchronization
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

    /// The first signal received (0: none), stored by the handler itself: `exit` sees a signal
    /// the moment it is delivered, before the thread that acts on it has run.
    private static let received = Atomic<Int32>(0)
    /// Posted by the handler (`sem_post` is async-signal-safe) to wake the thread that acts.
    nonisolated(unsafe) private static let wakeup: UnsafeMutablePointer<sem_t> = {
        let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
        return semaphore
    }()

    /// Call once, before any work.
    static func install() {
        // A closed pipe (`velvet render … -o - | head -c 1000`) is a failed write, reported in
        // one line with exit 1 as ffmpeg does, not a silent death by SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        _ = received.load(ordering: .relaxed)
        _ = wakeup
        let watcher = Thread {
            while true {
                while sem_wait(wakeup) != 0 {} // interrupted by a signal: wait again
                let number = received.load(ordering: .acquiring)
                if number != 0 { terminate(signal: number) }
            }
        }
        watcher.start()
        for number in names.keys {
            // A signal the process was started with ignored (`nohup`, a background job of a
            // script) stays ignored, as the shell asked.
            let previous = signal(number, SIG_IGN)
            if unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) { continue }
            // The handler only notes the signal and wakes the watcher (no default death, no
            // runtime crash report for SIGQUIT); system calls it interrupts resume.
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                _ = TerminationSignals.received.compareExchange(expected: 0, desired: number, ordering: .acquiringAndReleasing)
                sem_post(TerminationSignals.wakeup)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(number, &action, nil)
        }
    }

    /// Taken by whichever ends the process first, and never given back: the watcher (which
    /// exits 128+N) or `exit` (the command's status, unless a signal came first).
    private static let ending = NSLock()

    /// Ends the process with the command's status, or with 128+N where a signal was delivered
    /// before (the watcher may not have run yet: a SIGTERM in the milliseconds after the last
    /// output was in place was lost, exit 0 and no line, in 10 of 247 tries of `Tools/late-signal.sh`).
    /// Streams are flushed; `exit(3)`'s atexit handlers and the libraries' destructors are
    /// skipped, so the process ends right after the decision (a later signal is too late).
    static func exit(_ status: Int32) -> Never {
        fflush(nil)
        ending.lock()
        let number = received.load(ordering: .acquiring)
        if number != 0 { end(signal: number) }
        _exit(status)
    }

    private static func terminate(signal number: Int32) -> Never {
        ending.lock()
        end(signal: number)
    }

    private static func end(signal number: Int32) -> Never {
        let name = names[number] ?? "signal \(number)"
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
}
