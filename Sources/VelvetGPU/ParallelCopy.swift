import Foundation

/// Large host copies (a frame's planes into upload staging) split over a few cores: one core
/// copies about 6 GB/s, and the copy sits on the GPU thread, the render's bottleneck at 720p.
public enum ParallelCopy {
    static let enabled = ProcessInfo.processInfo.environment["VELVET_SERIAL_COPY"] == nil
    /// Below this a copy stays on the calling thread (a dispatch costs more than it saves).
    public static let minimumBytes = 256 << 10
    static let maximumParts = min(4, ProcessInfo.processInfo.activeProcessorCount)

    /// How many parts `bytes` are copied in.
    public static func parts(for bytes: Int) -> Int {
        guard enabled, bytes >= minimumBytes else { return 1 }
        return max(1, min(maximumParts, bytes / (minimumBytes / 2)))
    }

    /// Runs `body(part)` for part 0..<parts, on several threads when parts > 1.
    public static func run(parts: Int, _ body: (Int) -> Void) {
        if parts <= 1 { body(0); return }
        withoutActuallyEscaping(body) { body in
            // concurrentPerform returns only after every part ran, so what `body` captures
            // (raw pointers) outlives it.
            let shared = SharedBody(body: body)
            DispatchQueue.concurrentPerform(iterations: parts) { shared.body($0) }
        }
    }

    private struct SharedBody: @unchecked Sendable {
        let body: (Int) -> Void
    }

    /// Copies `count` bytes.
    public static func copy(to destination: UnsafeMutableRawPointer, from source: UnsafeRawPointer, count: Int) {
        let parts = parts(for: count)
        let step = (count + parts - 1) / parts
        run(parts: parts) { part in
            let start = part * step
            let length = min(step, count - start)
            if length > 0 { (destination + start).copyMemory(from: source + start, byteCount: length) }
        }
    }
}
