import CFFmpeg
import Foundation

/// The output's container (chosen by `--format`, else by the path's extension) and what it
/// can hold. Each answer comes from FFmpeg's muxer itself, asked before anything is decoded.
struct OutputContainer: @unchecked Sendable {
    let path: String
    let format: UnsafePointer<AVOutputFormat>
    /// The muxer's name (`mp4`, `matroska`, `image2`, ...).
    let name: String
    /// `--format` chose the muxer (messages name it, not the file's extension).
    let isNamedByFormat: Bool

    /// The path that means standard output, as in ffmpeg.
    static let standardOutput = "-"
    /// The muxers that stream to a pipe (no seeking back to finish a header or index), by
    /// FFmpeg's name, with the short names also taken.
    static let pipeFormats = ["matroska", "nut", "mpegts", "yuv4mpegpipe"]
    static let formatAliases = ["mkv": "matroska", "y4m": "yuv4mpegpipe", "ts": "mpegts"]

    /// - Parameter formatName: the muxer asked for by name (`--format`); required for `-`.
    init(path: String, formatName: String? = nil) throws {
        let isPipe = path == Self.standardOutput
        // A folder, or a name ending in '/', is no file to write whatever its extension
        // (`-o clips.mp4` where clips.mp4 is a folder was "cannot write", exit 1).
        if !isPipe, let folder = Self.folderError(path) { throw folder }
        if let formatName {
            let muxer = Self.formatAliases[formatName] ?? formatName
            if isPipe, !Self.pipeFormats.contains(muxer) {
                throw MediaError.output(path: path, reason: "--format \(formatName) cannot stream to standard output; "
                                        + "-o - takes --format matroska, nut, mpegts or y4m")
            }
            guard let format = av_guess_format(muxer, nil, nil) else {
                throw MediaError.output(path: path, reason: "unknown --format '\(formatName)' (ffmpeg -muxers lists them)")
            }
            self.format = format
        } else {
            if isPipe { throw MediaError.output(path: path, reason: "-o - needs --format matroska, nut, mpegts or y4m") }
            guard let format = av_guess_format(nil, path, nil) else { throw Self.unknownFormat(path) }
            self.format = format
        }
        self.path = path
        isNamedByFormat = formatName != nil && !isPipe
        name = String(cString: format.pointee.name)
        if Self.multiFileFormats.contains(name) {
            throw MediaError.output(path: path, reason: "the \(name) format writes several files (segments, playlists) where "
                                    + "Velvet writes one, whole or not at all: render to .mkv or .mp4, then segment it with ffmpeg")
        }
    }

    /// Muxers that write files of their own beside (or instead of) the output path, which
    /// `OutputFile` could neither hold back nor remove.
    static let multiFileFormats = ["hls", "dash", "segment", "stream_segment", "tee", "smoothstreaming", "webm_chunk", "fifo",
                                   "fifo_test"]

    /// Writes to standard output: no temporary file, no overwrite rules, no seeking.
    var isStandardOutput: Bool { path == Self.standardOutput }
    /// y4m writes deep and 4:4:0 formats only as "unofficial" ones (FFmpeg's own tools read them).
    var writesUnofficialFormats: Bool { name == "yuv4mpegpipe" }
    /// What audio the container cannot hold is re-encoded to: AAC, else the format's own audio
    /// codec (WebM: Opus, Ogg: Vorbis) when FFmpeg has an encoder for it; nil if neither.
    var audioCodecForReencoding: AVCodecID? {
        [AV_CODEC_ID_AAC, format.pointee.audio_codec].first { codec in
            codec != AV_CODEC_ID_NONE && avcodec_find_encoder(codec) != nil && holds(encoded: codec, type: AVMEDIA_TYPE_AUDIO)
        }
    }
    /// A format with no audio or subtitle codec of its own (y4m, GIF, animated WebP, APNG):
    /// the input's other streams are dropped, as ffmpeg drops them.
    var holdsOnlyVideo: Bool { format.pointee.audio_codec == AV_CODEC_ID_NONE && format.pointee.subtitle_codec == AV_CODEC_ID_NONE }
    /// The container as messages name it: the extension as the user wrote it (`.avi`), or the
    /// muxer for standard output.
    var displayName: String {
        if isNamedByFormat { return "the \(name) format" } // --format, not the extension, chose it
        return isStandardOutput || URL(fileURLWithPath: path).pathExtension.isEmpty ? name : fileExtension
    }

    /// A picture format (image2): the file is a picture, or a sequence of them.
    var writesPictures: Bool { name == "image2" }
    /// Pictures named as ffmpeg names a sequence (`frame%04d.png`): one file a frame,
    /// numbered from 1 (`ImageSequence`).
    var isSequence: Bool { writesPictures && !isStandardOutput && ImageSequence.namesFrameNumber(path) }
    /// y4m states no YUV matrix: readers take BT.601, so RGB is converted with it.
    var statesMatrix: Bool { name != "yuv4mpegpipe" }
    /// One picture: a still output takes one frame.
    var isStillImage: Bool { writesPictures && !isSequence }
    /// The extension as the user wrote it, for messages (`.avi`).
    var fileExtension: String { "." + URL(fileURLWithPath: path).pathExtension }

    /// The mov/mp4 family: in FFmpeg 5.1 the only muxer that writes a display matrix, and the
    /// one whose HEVC tag matters to Apple's players.
    var isQuickTime: Bool { ["mov", "mp4", "psp", "3gp", "3g2", "ipod", "ismv", "f4v"].contains(name) }
    var carriesDisplayMatrix: Bool { isQuickTime }

    /// The text subtitle codec this container takes, for subtitles it cannot hold as they are.
    var textSubtitleCodec: AVCodecID? {
        if isQuickTime { return AV_CODEC_ID_MOV_TEXT }
        let codec = format.pointee.subtitle_codec
        return codec != AV_CODEC_ID_NONE && Self.isTextSubtitle(codec) ? codec : nil
    }

    /// Whether the video stream Velvet will encode can go in, asked with its size, pixel
    /// format and frame rate: a muxer may take a codec by its list and refuse it in the header
    /// (AV1 in MOV), or keep no list and need the frame rate to answer (MXF).
    func holds(video codec: AVCodecID, width: Int, height: Int, pixelFormat: AVPixelFormat, frameRate: AVRational) -> Bool {
        guard avformat_query_codec(format, codec, FF_COMPLIANCE_NORMAL) != 0, let parameters = avcodec_parameters_alloc() else { return false }
        var owned: UnsafeMutablePointer<AVCodecParameters>? = parameters
        defer { avcodec_parameters_free(&owned) }
        parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        parameters.pointee.codec_id = codec
        parameters.pointee.width = Int32(width)
        parameters.pointee.height = Int32(height)
        parameters.pointee.format = pixelFormat.rawValue
        let rate = frameRate.num > 0 && frameRate.den > 0 ? frameRate : AVRational(num: 25, den: 1)
        return muxerAccepts(parameters, timeBase: AVRational(num: rate.den, den: rate.num))
    }

    /// Whether a stream that Velvet encodes (its extradata not known yet) can go in, by its codec alone.
    func holds(encoded codec: AVCodecID, type: AVMediaType) -> Bool {
        if name == "mpegts" { return Self.transportStreamCodecs.contains(codec) }
        switch avformat_query_codec(format, codec, FF_COMPLIANCE_NORMAL) {
        case 1: return true
        case 0: return false
        default:
            // The muxer keeps no codec list (gif, yuv4mpegpipe, mpegts): let it try the header.
            guard let parameters = avcodec_parameters_alloc() else { return false }
            var owned: UnsafeMutablePointer<AVCodecParameters>? = parameters
            defer { avcodec_parameters_free(&owned) }
            parameters.pointee.codec_type = type
            parameters.pointee.codec_id = codec
            if type == AVMEDIA_TYPE_VIDEO {
                // A muxer that needs dimensions (MPEG-PS) refuses a header without them.
                (parameters.pointee.width, parameters.pointee.height) = (16, 16)
            }
            return muxerAccepts(parameters)
        }
    }

    /// Whether a stream copied from the input can go in as it is. A codec the muxer takes only
    /// in experimental mode (FLAC in MP4) counts as refused: its header would fail later.
    func holds(copyOf parameters: UnsafePointer<AVCodecParameters>) -> Bool {
        if name == "mpegts" { return Self.transportStreamCodecs.contains(parameters.pointee.codec_id) && muxerAccepts(parameters) }
        // MPEG-PS writes any subtitle as a private stream, which comes back as a DVD bitmap track
        // no reader can show: it holds DVD subtitles alone.
        if Self.programStreams.contains(name), parameters.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE {
            return parameters.pointee.codec_id == AV_CODEC_ID_DVD_SUBTITLE && muxerAccepts(parameters)
        }
        // FLV marks 8 and 16 kHz as its special rate, which only Nellymoser reads as such: other
        // audio at those rates plays at 5512 Hz.
        if name == "flv", parameters.pointee.codec_type == AVMEDIA_TYPE_AUDIO, [8000, 16000].contains(parameters.pointee.sample_rate),
           ![AV_CODEC_ID_NELLYMOSER, AV_CODEC_ID_SPEEX].contains(parameters.pointee.codec_id) {
            return false
        }
        return avformat_query_codec(format, parameters.pointee.codec_id, FF_COMPLIANCE_NORMAL) != 0 && muxerAccepts(parameters)
    }

    /// FFmpeg's MPEG program stream muxers.
    static let programStreams: Set<String> = ["mpeg", "vob", "dvd", "svcd", "vcd"]

    /// What FFmpeg's MPEG-TS muxer gives a stream type readers know (mpegtsenc.c); it takes any
    /// other codec too, as anonymous data that comes back as `bin_data`, so those count as refused.
    static let transportStreamCodecs: Set<AVCodecID> = [
        AV_CODEC_ID_MPEG1VIDEO, AV_CODEC_ID_MPEG2VIDEO, AV_CODEC_ID_MPEG4, AV_CODEC_ID_H264, AV_CODEC_ID_HEVC, AV_CODEC_ID_CAVS,
        AV_CODEC_ID_DIRAC, AV_CODEC_ID_VC1,
        AV_CODEC_ID_MP2, AV_CODEC_ID_MP3, AV_CODEC_ID_AAC, AV_CODEC_ID_AAC_LATM, AV_CODEC_ID_AC3, AV_CODEC_ID_EAC3, AV_CODEC_ID_DTS,
        AV_CODEC_ID_TRUEHD, AV_CODEC_ID_OPUS, AV_CODEC_ID_S302M,
        AV_CODEC_ID_DVB_SUBTITLE, AV_CODEC_ID_DVB_TELETEXT,
    ]

    /// Sets up a muxer of this format with just `parameters` and writes its header to memory.
    private func muxerAccepts(_ parameters: UnsafePointer<AVCodecParameters>, timeBase: AVRational = AVRational(num: 1, den: 90000)) -> Bool {
        var allocated: UnsafeMutablePointer<AVFormatContext>? = nil
        guard avformat_alloc_output_context2(&allocated, format, nil, nil) >= 0, let context = allocated else { return false }
        defer {
            if context.pointee.pb != nil {
                var buffer: UnsafeMutablePointer<UInt8>? = nil
                avio_close_dyn_buf(context.pointee.pb, &buffer)
                av_free(buffer)
                context.pointee.pb = nil
            }
            avformat_free_context(context)
        }
        guard let stream = avformat_new_stream(context, nil), avcodec_parameters_copy(stream.pointee.codecpar, parameters) >= 0,
              avio_open_dyn_buf(&context.pointee.pb) >= 0 else { return false }
        stream.pointee.codecpar.pointee.codec_tag = 0
        stream.pointee.time_base = timeBase
        if writesUnofficialFormats { context.pointee.strict_std_compliance = FF_COMPLIANCE_UNOFFICIAL } // as the writer sets it
        // Quietly: a refusal is an answer here, not an error to print.
        return LogCapture.firstError { avformat_write_header(context, nil) }.result >= 0
    }

    static func isTextSubtitle(_ codec: AVCodecID) -> Bool {
        (avcodec_descriptor_get(codec)?.pointee.props ?? 0) & AV_CODEC_PROP_TEXT_SUB != 0
    }

    /// The refusal of an output path that names a folder: one there, or a name ending in '/'.
    static func folderError(_ path: String) -> MediaError? {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            return .output(path: path, reason: "it is a directory; name the output file (.mp4, .mkv, .mov, .png, .jpg, ...)")
        }
        if path.hasSuffix("/") {
            return .output(path: path, reason: "a name ending in '/' names a folder; name the output file (.mp4, .mkv, .mov, .png, .jpg, ...)")
        }
        return nil
    }

    static func unknownFormat(_ path: String) -> MediaError {
        if let folder = folderError(path) { return folder }
        let pathExtension = URL(fileURLWithPath: path).pathExtension
        guard !pathExtension.isEmpty else {
            return .output(path: path, reason: "no extension to choose a format by (use .mp4, .mkv, .mov, .png, .jpg, ... or --format)")
        }
        return .output(path: path, reason: "unknown output format '.\(pathExtension)' (use .mp4, .mkv, .mov, .png, .jpg, ...)")
    }
}
