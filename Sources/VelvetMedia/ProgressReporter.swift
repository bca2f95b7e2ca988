import Foundation

/// Progress on stderr (frames done/total, fps, ETA), never on stdout, off with `--quiet`. On
/// a terminal one line redraws itself (`\r`) five times a second; elsewhere (a log file, a
/// pipe, a scheduler's capture) a plain line is printed every `plainInterval` seconds, so a
/// log gets a readable record instead of carriage returns.
public final class ProgressReporter: @unchecked Sendable {
    public enum Style: Sendable { case terminal, plain, off }

    /// Seconds between plain lines.
    public static let plainInterval = 5.0

    private let style: Style
    private let start: Date
    private var lastLine: Date
    private let write: (String) -> Void

    public convenience init(quiet: Bool) {
        self.init(style: quiet ? .off : isatty(STDERR_FILENO) == 1 ? .terminal : .plain) {
            FileHandle.standardError.write(Data($0.utf8))
        }
    }

    /// - Parameters:
    ///   - start: when the work began (ETA and fps count from it).
    ///   - write: where the text goes (stderr).
    public init(style: Style, start: Date = Date(), write: @escaping (String) -> Void) {
        (self.style, self.start, self.write) = (style, start, write)
        // A terminal's line appears at once; the first plain line after one interval.
        lastLine = style == .terminal ? .distantPast : start
    }

    /// - Parameter total: the frames the input announces, 0 when unknown (a pipe): no ETA then.
    public func update(frames: Int, total: Int, now: Date = Date()) {
        let interval = style == .terminal ? 0.2 : Self.plainInterval
        guard style != .off, now.timeIntervalSince(lastLine) >= interval else { return }
        lastLine = now
        let line = Self.line(frames: frames, total: total, elapsed: now.timeIntervalSince(start))
        write(style == .terminal ? "\r" + line + "\u{1B}[K" : line + "\n")
    }

    public func finish() {
        if style == .terminal { write("\r\u{1B}[K") }
    }

    /// `velvet: frame 120/250 (48 %)  24.0 fps  ETA 0:05`; without a total, frames and fps.
    static func line(frames: Int, total: Int, elapsed: Double) -> String {
        let fps = elapsed > 0 ? Double(frames) / elapsed : 0
        var line = total > 0 ? "velvet: frame \(frames)/\(total) (\(min(100, frames * 100 / total)) %)" : "velvet: frame \(frames)"
        line += String(format: "  %.1f fps", fps)
        if total > frames, fps > 0 {
            let remaining = Int((Double(total - frames) / fps).rounded(.up))
            line += String(format: "  ETA %d:%02d", remaining / 60, remaining % 60)
        }
        return line
    }
}

extension MediaInfo {
    /// The frames progress counts to: those the container announces, else as many as its
    /// declared duration holds (Matroska), else 0 (a pipe: no ETA).
    var progressTotal: Int { announcedFrameCount > 0 ? announcedFrameCount : declaredLength?.frames ?? 0 }
}
