/// How the output is encoded. Defaults match what a user of `ffmpeg -c:v libx264` expects.
public struct EncoderSettings: Sendable, Equatable {
    /// One `--encoder-opt key=value`: an AVOption of the encoder (`ffmpeg -h encoder=NAME`).
    public struct Option: Sendable, Equatable {
        public var key: String
        public var value: String
        public init(key: String, value: String) { (self.key, self.value) = (key, value) }
    }

    /// The video encoder as asked for: an FFmpeg encoder name (`libx264`, `prores_ks`, ...) or
    /// one of `aliases`; nil takes the container's default (`encoderName(forMuxer:)`).
    public var codec: String?
    /// AVOptions set on the encoder after Velvet's own (so they win over `crf` and `preset`).
    public var encoderOptions: [Option] = []
    /// The muxer by FFmpeg's name (`--format`), instead of the one the extension implies;
    /// required for standard output (`-o -`).
    public var format: String?
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

    /// These settings for a picture in a batch of videos and pictures: a picture's encoder and
    /// container follow its extension, so a `--codec` and the options given with it, and a
    /// `--format`, are the videos'; without a `--codec` the options reach every encoder (each
    /// must take them).
    public var forPictures: EncoderSettings {
        var settings = self
        if settings.codec != nil { settings.encoderOptions = [] }
        settings.codec = nil
        settings.format = nil
        return settings
    }

    public static let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow"]

    /// The short names Velvet had before any FFmpeg encoder could be named.
    public static let aliases = ["h264": "libx264", "hevc": "libx265"]
    /// The encoders `--crf` and `--preset-x264` apply to.
    public static let x26xEncoders: Set<String> = ["libx264", "libx265"]

    /// The FFmpeg encoder for a muxer: the one asked for, else raw frames for y4m (which holds
    /// nothing else), else libx264.
    public func encoderName(forMuxer muxer: String) -> String {
        if let codec { return Self.aliases[codec] ?? codec }
        return muxer == "yuv4mpegpipe" ? "wrapped_avframe" : "libx264"
    }

    /// What changes the encoded output, for records that must notice a change (batch). The
    /// settings Velvet always had are written as before, so older records stay valid.
    public var fingerprint: String {
        var text = "codec=\(codec ?? "h264") crf=\(crf) preset=\(preset) pix-fmt=\(pixelFormat ?? "-")"
        if let format { text += " format=\(format)" }
        if !encoderOptions.isEmpty { text += " opts=" + encoderOptions.map { "\($0.key)=\($0.value)" }.joined(separator: ":") }
        return text
    }
}
