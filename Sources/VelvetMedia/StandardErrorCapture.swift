import Foundation

/// What a library prints straight to stderr during some work: x264, x265 and SVT-AV1 print
/// their refusals with their own loggers (`x264 [error]: baseline profile doesn't support
/// 4:4:4`), past av_log, above Velvet's one-line error. Standard error goes to a temporary file
/// for the work; the caller replays it where the work succeeded (nothing another thread wrote
/// meanwhile is lost then) and drops it for its own line where the work failed.
enum StandardErrorCapture {
    /// One capture at a time: two (a batch's workers opening their encoders together) would
    /// each put back what the other had put in place, leaving stderr on a deleted file.
    private static let lock = NSLock()

    static func during<T>(_ work: () -> T) -> (result: T, written: String) {
        lock.lock()
        defer { lock.unlock() }
        fflush(nil)
        guard let file = tmpfile() else { return (work(), "") }
        defer { fclose(file) }
        let saved = dup(STDERR_FILENO)
        guard saved >= 0, dup2(fileno(file), STDERR_FILENO) >= 0 else {
            if saved >= 0 { close(saved) }
            return (work(), "")
        }
        let result = work()
        fflush(nil)
        dup2(saved, STDERR_FILENO)
        close(saved)
        rewind(file)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            guard count > 0 else { break }
            bytes += buffer[..<count]
        }
        return (result, String(decoding: bytes, as: UTF8.self))
    }

    /// Writes `text` to standard error (a successful work's output, replayed).
    static func replay(_ text: String) {
        guard !text.isEmpty else { return }
        FileHandle.standardError.write(Data(text.utf8))
    }
}
