import CFFmpeg
import Foundation

/// The video encoder's options and the checks that find a wrong one before any decoding:
/// Velvet's own for x264/x265 (crf, preset, lossless, HDR SEI), then the user's
/// `--encoder-opt` pairs as AVOptions (as `ffmpeg -c:v NAME -key value` sets them).
enum EncoderTuning {
    /// The encoder `settings` name for `container` (stills: the image2 muxer's codec for the
    /// extension, .png -> png, .jpg -> mjpeg).
    static func encoder(for container: OutputContainer, settings: EncoderSettings) throws -> UnsafePointer<AVCodec> {
        if container.writesPictures {
            let id = av_guess_codec(container.format, nil, container.path, nil, AVMEDIA_TYPE_VIDEO)
            guard let codec = avcodec_find_encoder(id) else {
                throw MediaError.output(path: container.path, reason: "no encoder for \(container.fileExtension) images")
            }
            // The extension chooses a picture's encoder; a --codec naming another is no silent no-op.
            if let asked = settings.codec, (EncoderSettings.aliases[asked] ?? asked) != String(cString: codec.pointee.name) {
                throw MediaError.output(path: container.path, reason: "--codec \(asked) does not apply: a \(container.fileExtension) "
                                        + "picture is written with \(String(cString: codec.pointee.name)), chosen by its extension")
            }
            return codec
        }
        let name = settings.encoderName(forMuxer: container.name)
        // No codec asked for and a container that holds no H.264 (.webp, .gif, .webm, .ogv):
        // the container's own, as ffmpeg chooses it.
        // A raw stream's muxer (.hevc, .mjpeg, .m2v, .yuv) takes any codec's packets, but its file
        // is read as its own codec's: that one, as ffmpeg chooses it.
        let rawStream = container.format.pointee.flags & AVFMT_NOTIMESTAMPS != 0 && container.name != "yuv4mpegpipe"
            && container.format.pointee.video_codec != AV_CODEC_ID_H264
        if settings.codec == nil, name == "libx264", rawStream || !container.holds(encoded: AV_CODEC_ID_H264, type: AVMEDIA_TYPE_VIDEO),
           let own = avcodec_find_encoder(container.format.pointee.video_codec), own.pointee.type == AVMEDIA_TYPE_VIDEO {
            return own
        }
        guard let codec = avcodec_find_encoder_by_name(name) else {
            throw MediaError.encode("there is no encoder '\(name)' in this FFmpeg build (ffmpeg -encoders lists them)")
        }
        guard codec.pointee.type == AVMEDIA_TYPE_VIDEO else { throw MediaError.encode("\(name) is not a video encoder") }
        return codec
    }

    /// Sets Velvet's options for x264/x265, then the user's; a key the encoder does not have
    /// or a value it refuses is an error naming it.
    static func apply(_ settings: EncoderSettings, to encoder: UnsafeMutablePointer<AVCodecContext>, hdr: HDRMetadata?) throws {
        let name = String(cString: encoder.pointee.codec.pointee.name)
        // SVT-AV1 prints its whole configuration to stderr unless told otherwise (1: errors).
        if name == "libsvtav1" { setenv("SVT_LOG", "1", 0) }
        if EncoderSettings.x26xEncoders.contains(name) {
            let x265 = name == "libx265"
            if settings.isLossless && !x265 {
                av_opt_set(encoder.pointee.priv_data, "qp", "0", 0)
            } else {
                av_opt_set(encoder.pointee.priv_data, "crf", "\(settings.crf)", 0)
            }
            av_opt_set(encoder.pointee.priv_data, "preset", settings.preset, 0)
            let lossless = settings.isLossless && x265 ? ["lossless=1"] : []
            let parameters = (x265 ? ["log-level=error"] : []) + lossless + (hdr?.encoderParameters(x265: x265) ?? [])
            if !parameters.isEmpty {
                av_opt_set(encoder.pointee.priv_data, x265 ? "x265-params" : "x264-params", parameters.joined(separator: ":"), 0)
            }
        }
        let userKeys = Set(settings.encoderOptions.map(\.key))
        if EncoderSettings.x26xEncoders.contains(name), !userKeys.contains("crf"), !userKeys.isDisjoint(with: ["b", "qp"]) {
            // x264 and x265 take a crf before a bitrate or a qp: Velvet's crf would have won.
            av_opt_set(encoder.pointee.priv_data, "crf", "-1", 0)
            if settings.isLossless { av_opt_set(encoder.pointee.priv_data, "qp", "-1", 0) }
        }
        for var option in settings.encoderOptions {
            // The user's x265-params replace Velvet's; x265's banner stays off unless they set its level.
            if name == "libx265", option.key == "x265-params", !option.value.contains("log-level") {
                option.value = "log-level=error:" + option.value
            }
            guard av_opt_find(encoder, option.key, nil, 0, AV_OPT_SEARCH_CHILDREN) != nil else {
                throw MediaError.encode("\(name) has no option '\(option.key)' (ffmpeg -h encoder=\(name) lists them)")
            }
            // x264 and x265 check a preset or tune only when the encoder opens, and print their
            // own error line on stderr then: refused here instead, in Velvet's one line.
            if let names = x26xNames[name]?[option.key], let unknown = unknownName(option.value, among: names, joins: name == "libx264" && option.key == "tune") {
                throw MediaError.encode("\(name) refuses --encoder-opt \(option.key)=\(option.value): no \(option.key) '\(unknown)' "
                                        + "(\(names.joined(separator: ", ")))")
            }
            let set = LogCapture.firstError { av_opt_set(encoder, option.key, option.value, AV_OPT_SEARCH_CHILDREN) }
            guard set.result >= 0 else {
                let reason = set.logged.split(whereSeparator: \.isNewline).first.map(String.init) ?? ffmpegMessage(set.result)
                throw MediaError.encode("\(name) refuses --encoder-opt \(option.key)=\(option.value): \(reason)")
            }
        }
    }

    /// The presets and tunes x264 and x265 know (their `x264_preset_names`, `x265_preset_names`,
    /// `x264_tune_names`, `x265_tune_names`); a tune may join several with , . / - or +.
    private static let x26xNames: [String: [String: [String]]] = [
        "libx264": ["preset": EncoderSettings.presets + ["placebo"],
                    "tune": ["film", "animation", "grain", "stillimage", "psnr", "ssim", "fastdecode", "zerolatency"]],
        "libx265": ["preset": EncoderSettings.presets + ["placebo"],
                    "tune": ["psnr", "ssim", "grain", "zerolatency", "zero-latency", "fastdecode", "fast-decode", "animation"]],
    ]

    /// The first part of `value` that is none of `names` (compared as the encoders do, without
    /// case; a number is left to the encoder, which takes presets by index), or nil.
    private static func unknownName(_ value: String, among names: [String], joins: Bool) -> String? {
        let parts = joins ? value.split(whereSeparator: { ",./-+".contains($0) }).map(String.init) : [value]
        return parts.first { part in !part.allSatisfy(\.isNumber) && !names.contains(part.lowercased()) }
    }

    /// One frame: the time base of an output that numbers its frames (y4m, Theora); 1/25 for an unknown rate.
    static func frameTimeBase(_ frameRate: AVRational) -> AVRational {
        frameRate.num > 0 && frameRate.den > 0 ? AVRational(num: frameRate.den, den: frameRate.num) : AVRational(num: 1, den: 25)
    }

    /// Encoders whose time base is their frame rate (Theora's granule positions count frames):
    /// their frames are numbered, one per tick.
    static func numbersFrames(_ codec: UnsafePointer<AVCodec>) -> Bool { codec.pointee.id == AV_CODEC_ID_THEORA }

    /// Encoders whose rate control takes the time base for the frame interval (FFmpeg's MPEG
    /// video family, VC-2): a bitrate is split per tick, so 1/12800 (an MP4's) starved every
    /// frame (VC-2's default lost 20 dB; `b=` gave a third of the bits from MP4 as from TS), and
    /// FLV in SWF refuses a rate of 12800. Their time base is 1/rate, as ffmpeg's.
    private static let pacesByTimeBase: Set<AVCodecID> = [AV_CODEC_ID_MPEG4, AV_CODEC_ID_H263, AV_CODEC_ID_H263P, AV_CODEC_ID_MSMPEG4V2,
                                                          AV_CODEC_ID_MSMPEG4V3, AV_CODEC_ID_WMV1, AV_CODEC_ID_WMV2, AV_CODEC_ID_FLV1,
                                                          AV_CODEC_ID_RV10, AV_CODEC_ID_RV20, AV_CODEC_ID_H261, AV_CODEC_ID_DIRAC]

    /// The encoder's time base: the input stream's, so every frame keeps its timestamp, except
    /// for encoders that take only a list of frame rates (MPEG-1/2 video) and need 1/rate:
    /// the listed rate nearest the input's, as ffmpeg picks it; Theora and the encoders that
    /// pace their rate control by it (`pacesByTimeBase`), 1/rate.
    static func timeBase(for codec: UnsafePointer<AVCodec>, input: AVRational, frameRate: AVRational) -> AVRational {
        // Finer than a microsecond (an MP4 timescale of 10^9) overflows MP4's 32-bit composition
        // offsets, and no frame timing needs it: 1/90000, MPEG's clock, then.
        let fine = input.num > 0 && Int64(input.den) > 1_000_000 * Int64(input.num)
        let usable = fine ? AVRational(num: 1, den: 90000) : input.num > 0 && input.den > 0 ? input : AVRational(num: 1, den: 25)
        if numbersFrames(codec) || pacesByTimeBase.contains(codec.pointee.id) { return frameTimeBase(frameRate) }
        guard let rates = codec.pointee.supported_framerates else { return usable }
        let rate = frameRate.num > 0 && frameRate.den > 0 ? frameRate : AVRational(num: 25, den: 1)
        let nearest = rates[Int(av_find_nearest_q_idx(rate, rates))]
        return AVRational(num: nearest.den, den: nearest.num)
    }

    /// Sets up the encoder as the writer will and opens it on nothing: an encoder that cannot
    /// start (no NVIDIA hardware for NVENC, a frame size or pixel format a profile does not
    /// take) is found before any decoding.
    static func checkOpens(_ codec: UnsafePointer<AVCodec>, settings: EncoderSettings, width: Int, height: Int,
                           pixelFormat: AVPixelFormat, timeBase: AVRational) throws {
        guard !hangWithoutFrames.contains(String(cString: codec.pointee.name)) else { return }
        var context = avcodec_alloc_context3(codec)
        defer { avcodec_free_context(&context) }
        guard let encoder = context else { throw MediaError.encode("out of memory") }
        encoder.pointee.width = Int32(width)
        encoder.pointee.height = Int32(height)
        encoder.pointee.pix_fmt = pixelFormat
        encoder.pointee.framerate = AVRational(num: 25, den: 1)
        encoder.pointee.time_base = Self.timeBase(for: codec, input: timeBase, frameRate: encoder.pointee.framerate)
        try apply(settings, to: encoder, hdr: nil)
        let (opened, printed) = StandardErrorCapture.during { LogCapture.firstError { avcodec_open2(encoder, codec, nil) } }
        // The encoder's own refusal (x264's, printed past av_log) becomes the one line's reason.
        guard opened.result >= 0 else {
            let refusal = printed.split(whereSeparator: \.isNewline).first { $0.contains("[error]") }.map(String.init)
            throw openFailure(codec, opened.result, logged: refusal ?? (opened.logged.isEmpty ? printed : opened.logged))
        }
        StandardErrorCapture.replay(printed)
        // Closed as a finished encode is: SVT-AV1 hangs when freed before its end of stream.
        guard var packet = Optional(av_packet_alloc()) else { return }
        defer { av_packet_free(&packet) }
        if avcodec_send_frame(encoder, nil) >= 0 {
            while avcodec_receive_packet(encoder, packet) >= 0 { av_packet_unref(packet) }
        }
    }

    /// Encoders that never return when closed before a first frame (SVT-AV1 1.4 waits for
    /// a frame after the end of stream; `ffmpeg -frames:v 0 -c:v libsvtav1` hangs the same
    /// way): checked only when the render opens them, and ended before they are closed.
    static let hangWithoutFrames: Set<String> = ["libsvtav1"]

    /// One line for an encoder that would not open, with what FFmpeg logged about it.
    static func openFailure(_ codec: UnsafePointer<AVCodec>, _ code: Int32, logged: String = "") -> MediaError {
        let name = String(cString: codec.pointee.name)
        let said = logged.split(whereSeparator: \.isNewline).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        var reason = "the \(name) encoder cannot start: " + (said.isEmpty ? ffmpegMessage(code) : said.trimmingCharacters(in: ["."]))
        if name.hasSuffix("_nvenc") { reason += " (NVENC needs an NVIDIA GPU with its driver)" }
        return .encode(reason)
    }
}
