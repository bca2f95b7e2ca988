import CFFmpeg

/// The FFmpeg libraries Velvet runs with (those loaded at run time, not the headers built against).
public enum FFmpegLibraries {
    /// `libavformat 59.27.100`, ... and FFmpeg's own version string (`5.1.9-0+deb12u1`).
    public static var versions: (release: String, libraries: [String]) {
        func text(_ name: String, _ version: UInt32) -> String { "\(name) \(version >> 16).\((version >> 8) & 0xFF).\(version & 0xFF)" }
        return (String(cString: av_version_info()),
                [text("libavformat", avformat_version()), text("libavcodec", avcodec_version()),
                 text("libavutil", avutil_version()), text("libswscale", swscale_version()),
                 text("libswresample", swresample_version())])
    }
}
