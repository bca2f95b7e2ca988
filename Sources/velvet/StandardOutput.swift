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
        if fflush(stream) != 0 { throw failure(errno: errno) }
        if ferror(stream) != 0 {
            clearerr(stream)
            throw WriteFailure(reason: "a write failed")
        }
    }

    /// Writes the file at `path` through the stream, a piece at a time.
    static func copy(fileAt path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw WriteFailure(reason: "cannot read \(path)") }
        defer { try? handle.close() }
        while let piece = try handle.read(upToCount: 1 << 20), !piece.isEmpty {
            // A piece larger than the buffer goes to the descriptor at once: a failure shows
            // here, with its errno, and not at the flush after it.
            let written = piece.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, stream) }
            if written < piece.count { throw failure(errno: errno) }
            try flush()
        }
    }

    /// The error for a write that failed with `code`: a closed pipe is the reader's choice.
    private static func failure(errno code: Int32) -> Error {
        clearerr(stream)
        return code == EPIPE ? ReaderClosed() : WriteFailure(reason: String(cString: strerror(code)))
    }

    /// Writes and flushes `text`, ignoring failure (for the error path, which reports on stderr too).
    static func writeIgnoringFailure(_ text: String) {
        fputs(text, stream)
        fflush(stream)
    }
}
