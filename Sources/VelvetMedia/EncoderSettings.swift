/// How the output is encoded. Defaults match what a user of `ffmpeg -c:v libx264` expects.
public struct EncoderSettings: Sendable, Equatable {
    public enum Codec: String, Sendable, CaseIterable {
        case h264, hevc
        /// The FFmpeg encoder that writes it.
        public var encoderName: String { self == .hevc ? "libx265" : "libx264" }
    }

    public var codec: Codec = .h264
    /// x264/x265 constant rate factor, 0...51 (lower is better quality); 0 is lossless.
    public var crf: Int = 18
    /// crf 0 codes every frame losslessly at any bit depth: x264's own crf 0 is lossless only
    /// at 8 bits (deeper video needs qp 0), and x265 needs `lossless=1`.
    public var isLossless: Bool { crf == 0 }
    /// x264/x265 preset: ultrafast ... veryslow.
    public var preset: String = "medium"
    /// Output pixel format name (e.g. yuv420p, yuv444p, yuv420p10le); nil keeps the
    /// input's when the encoder takes it, else yuv420p (yuv420p10le for deep input).
    public var pixelFormat: String?
    /// JPEG output quality as FFmpeg's qscale, 2 (best) ... 31.
    public var jpegQuality: Int = 2

    public init() {}

    public static let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow"]
}
