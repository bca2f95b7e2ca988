import CFFmpeg

/// What can be checked about an output's encoding before any decoding: the command line's
/// mistakes are then usage errors found at once, not failures after the first frame.
public enum EncoderCheck {
    /// Whether FFmpeg knows a pixel format of that name (`ffmpeg -pix_fmts`).
    public static func isPixelFormat(_ name: String) -> Bool {
        av_get_pix_fmt(name) != AV_PIX_FMT_NONE
    }

    /// Why `output` cannot be written with `settings` (an unknown extension or `--format`,
    /// `-o -` without a format, an encoder FFmpeg does not have, an `--encoder-opt` it does not
    /// take, a requested pixel format it does not take), or nil when it can.
    public static func problem(output: String, settings: EncoderSettings) -> String? {
        do {
            let container = try OutputContainer(path: output, formatName: settings.format)
            let codec = try EncoderTuning.encoder(for: container, settings: settings)
            if settings.pixelFormat != nil {
                _ = try MediaWriter.encoderPixelFormat(codec: codec, source: AV_PIX_FMT_YUV420P,
                                                       requested: settings.pixelFormat, still: container.writesPictures)
            }
            var context = avcodec_alloc_context3(codec)
            defer { avcodec_free_context(&context) }
            if let context { try EncoderTuning.apply(settings, to: context, hdr: nil) }
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// Whether `output` is a picture (PNG, JPEG, ...: one frame), not a video.
    public static func writesOnePicture(output: String, settings: EncoderSettings) -> Bool {
        (try? OutputContainer(path: output, formatName: settings.format))?.isStillImage ?? false
    }

    /// Whether FFmpeg takes a picture of this size at all (`av_image_check_size`: about 268
    /// million pixels with its padding; 16384x16384 is past it).
    public static func isPictureSize(width: Int, height: Int) -> Bool {
        // The check logs its refusal: the caller says it in its own words, on one line.
        width > 0 && height > 0 && LogCapture.firstError { av_image_check_size(UInt32(width), UInt32(height), 0, nil) }.result == 0
    }

    /// The muxer FFmpeg writes `output` with (`--format`'s, else the one its extension names).
    public static func muxerName(output: String, settings: EncoderSettings) throws -> String {
        try OutputContainer(path: output, formatName: settings.format).name
    }

    /// The extension for a video written with `settings` where the user names no file (batch):
    /// `--format`'s own, else the first of .mp4, .mov, .mkv that holds the encoder's codec
    /// (ProRes and DNxHD: .mov, FFV1: .mkv).
    public static func videoExtension(_ settings: EncoderSettings) -> String {
        if let name = settings.format, let format = av_guess_format(OutputContainer.formatAliases[name] ?? name, nil, nil),
           let extensions = format.pointee.extensions, let first = String(cString: extensions).split(separator: ",").first {
            return String(first)
        }
        guard let codec = avcodec_find_encoder_by_name(settings.encoderName(forMuxer: "mp4")) else { return "mp4" }
        return ["mp4", "mov", "mkv"].first {
            (try? OutputContainer(path: "velvet.\($0)"))?.holds(encoded: codec.pointee.id, type: AVMEDIA_TYPE_VIDEO) == true
        } ?? "mp4"
    }

    /// Whether `settings` names libx264 or libx265 for `output` (the encoders `--crf` and
    /// `--preset-x264` tune); true when the output cannot be resolved (reported elsewhere).
    public static func isX26x(output: String, settings: EncoderSettings) -> Bool {
        guard let container = try? OutputContainer(path: output, formatName: settings.format) else { return true }
        return container.writesPictures || EncoderSettings.x26xEncoders.contains(settings.encoderName(forMuxer: container.name))
    }
}
