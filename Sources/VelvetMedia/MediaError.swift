import CFFmpeg

/// Errors a user can act on, each a single line.
public enum MediaError: Error, CustomStringConvertible, Equatable {
    case cannotOpen(path: String, reason: String)
    case noVideoStream(path: String)
    case unsupported(String)
    case invalidDimensions(width: Int, height: Int, limit: Int)
    case decode(path: String, reason: String)
    case encode(String)
    case output(path: String, reason: String)
    case truncated(path: String, framesDecoded: Int, reason: String)
    /// `truncated`, on an output that is a stream (standard output, a FIFO): what was sent stays.
    case truncatedAfterSending(path: String, frames: Int, reason: String, output: String)
    /// An input Velvet will not render, found before decoding (too large, too small, ...).
    case refused(path: String, reason: String)
    /// A matte (`--matte-in`) that does not fit the input it is to be applied to.
    case refusedMatte(path: String, reason: String)
    case interrupted

    public var description: String {
        let input = { (path: String) in path == MediaReader.standardInput ? "standard input" : path }
        switch self {
        case .cannotOpen(let path, let reason): return "cannot open \(input(path)): \(reason)"
        case .noVideoStream(let path): return "\(input(path)) has no video stream"
        case .unsupported(let what): return "unsupported: \(what)"
        case .invalidDimensions(let width, let height, let limit):
            return "frame size \(width)x\(height) is not supported (each side must be 1...\(limit) px)"
        case .decode(let path, let reason): return "cannot decode \(input(path)): \(reason)"
        case .encode(let reason): return "cannot encode: \(reason)"
        case .output(let path, let reason):
            return "cannot write \(path == OutputContainer.standardOutput ? "standard output" : path): \(reason)"
        case .truncated(let path, let frames, let reason):
            return "\(input(path)) is damaged or truncated after \(frames) frame(s) (\(reason)); nothing was written"
                + " (--allow-truncated keeps what decodes)"
        case .truncatedAfterSending(let path, let frames, let reason, let output):
            return "\(input(path)) is damaged or truncated after \(frames) frame(s) (\(reason)); what was rendered before it was already "
                + "sent to \(output == OutputContainer.standardOutput ? "standard output" : output), which ends there"
                + " (--allow-truncated keeps what decodes)"
        case .refused(let path, let reason): return "cannot render \(input(path)): \(reason)"
        case .refusedMatte(let path, let reason): return "cannot use the matte \(input(path)): \(reason)"
        case .interrupted: return "interrupted"
        }
    }

    /// The warning for a truncated input whose decodable part was kept.
    var keptDescription: String {
        guard case .truncated(let path, let frames, let reason) = self else { return description }
        return "\(path) is damaged or truncated after \(frames) frame(s) (\(reason)); kept the \(frames) frame(s) that decode"
    }
}

/// FFmpeg's message for an error code.
func ffmpegMessage(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    velvet_av_strerror(code, &buffer, buffer.count)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
