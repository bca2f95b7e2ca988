import Foundation

/// A one-line progress display on stderr (frames done/total, fps, ETA), only when stderr
/// is a terminal and not silenced. Nothing ever goes to stdout.
public final class ProgressReporter: @unchecked Sendable {
    private let enabled: Bool
    private let start = Date()
    private var lastDraw = Date.distantPast

    public init(quiet: Bool) {
        enabled = !quiet && isatty(STDERR_FILENO) == 1
    }

    func update(frames: Int, total: Int) {
        guard enabled, Date().timeIntervalSince(lastDraw) > 0.2 else { return }
        lastDraw = Date()
        let elapsed = Date().timeIntervalSince(start)
        let fps = elapsed > 0 ? Double(frames) / elapsed : 0
        var line = total > 0 ? "velvet: frame \(frames)/\(total)" : "velvet: frame \(frames)"
        line += String(format: "  %.1f fps", fps)
        if total > frames, fps > 0 {
            let remaining = Int(Double(total - frames) / fps)
            line += String(format: "  ETA %d:%02d", remaining / 60, remaining % 60)
        }
        FileHandle.standardError.write(Data(("\r" + line + "\u{1B}[K").utf8))
    }

    func finish() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
