import CFFmpeg

/// What can be checked about an output's encoding before any decoding: the command line's
/// mistakes are then usage errors found at once, not failures after the first frame.
public enum EncoderCheck {
    /// Whether FFmpeg knows a pixel format of that name (`ffmpeg -pix_fmts`).
    public static func isPixelFormat(_ name: String) -> Bool {
        av_get_pix_fmt(name) != AV_PIX_FMT_NONE
    }

    /// Why `output` cannot be written with `settings` (an unknown extension, or a requested
    /// pixel format its encoder does not take), or nil when it can.
    public static func problem(output: String, settings: EncoderSettings) -> String? {
        do {
            let container = try OutputContainer(path: output)
            let codec = try OutputPlan.encoder(for: container, settings: settings)
            if settings.pixelFormat != nil {
                _ = try MediaWriter.encoderPixelFormat(codec: codec, source: AV_PIX_FMT_YUV420P,
                                                       requested: settings.pixelFormat, still: container.isStillImage)
            }
            return nil
        } catch {
            return "\(error)"
        }
    }
}
