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

    /// The reader closed the pipe before the text ended (`velvet render --help | head -1`): it
    /// took what it wanted, so the command ends quietly, as text tools do (it said "error").
    struct ReaderClosed: Error {}

    static func flush() throws {
        let flushed = fflush(stream) == 0
        let code = errno
        guard flushed, ferror(stream) == 0 else {
            clearerr(stream)
            if !flushed, code == EPIPE { throw ReaderClosed() }
            throw WriteFailure(reason: flushed ? "a write failed" : String(cString: strerror(code)))
        }
    }

    /// Writes the file at `path` through the stream, a piece at a time.
    static func copy(fileAt path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw WriteFailure(reason: "cannot read \(path)") }
        defer { try? handle.close() }
        while let piece = try handle.read(upToCount: 1 << 20), !piece.isEmpty {
            _ = piece.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, stream) }
            try flush()
        }
    }

    /// Writes and flushes `text`, ignoring failure (for the error path, which reports on stderr too).
    static func writeIgnoringFailure(_ text: String) {
        fputs(text, stream)
        fflush(stream)
    }
}
