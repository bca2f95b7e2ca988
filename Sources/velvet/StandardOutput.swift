@preconcurrency import Glibc
import Foundation

/// stdout as C's buffered stream, which `print` writes through. A failed write (a full disk,
/// /dev/full) shows only when the buffer is flushed, and must fail the command rather than
/// vanish at exit.
enum StandardOutput {
    struct WriteFailure: Error, CustomStringConvertible {
        let reason: String
        var description: String { "cannot write to standard output: \(reason)" }
    }

    /// C's `stdout` is a global variable; it is only read, never reassigned.
    nonisolated(unsafe) private static let stream = stdout

    static func flush() throws {
        let flushed = fflush(stream) == 0
        let reason = String(cString: strerror(errno))
        guard flushed, ferror(stream) == 0 else {
            clearerr(stream)
            throw WriteFailure(reason: flushed ? "a write failed" : reason)
        }
    }

    /// Writes and flushes `text`, ignoring failure (for the error path, which reports on stderr too).
    static func writeIgnoringFailure(_ text: String) {
        fputs(text, stream)
        fflush(stream)
    }
}
