import CFFmpeg
import Foundation
import VelvetFiles

/// Encodes and muxes the output. Everything is written to a temporary file beside the
/// requested path (`OutputFile`) and moved into place only by `finish()`, so a failure or a
/// signal never leaves a half-written file at that path.
final class MediaWriter: @unchecked Sendable {
    let path: String
    private let file: OutputFile
    /// The pixel format `encode` expects frames in.
    private(set) var framePixelFormat = AV_PIX_FMT_NONE
    let isStillImage: Bool
    private let formatContext: UnsafeMutablePointer<AVFormatContext>
    private var encoder: UnsafeMutablePointer<AVCodecContext>?
    private var videoStream: UnsafeMutablePointer<AVStream>!
    /// Input stream index -> output stream, for streams copied untouched.
    private var copiedStreams: [Int: (output: UnsafeMutablePointer<AVStream>, inputTimeBase: AVRational)] = [:]
    /// Input stream index -> AAC re-encoder, for audio the container cannot hold as it is.
    private var transcodedStreams: [Int: AudioTranscoder] = [:]
    private let packet: MediaPacket
    private var converter: OpaquePointer? // swscale, only when the encoder needs another format
    private var convertedFrame: MediaFrame?
    private var finished = false
    var isFinished: Bool { finished }
    private(set) var framesWritten = 0

    /// - Parameters:
    ///   - sourcePixelFormat: the format the pipeline produces (a GPU plane layout).
    ///   - encoderPixelFormat: the format to encode (swscale converts when it differs).
    ///   - color: the colour tags to write.
    ///   - reader: the input whose timing, orientation, metadata and audio the output keeps;
    ///     nil for synthesised video (then `frameRate` sets the timing).
    init(path: String, reader: MediaReader?, frameRate: AVRational = AVRational(num: 25, den: 1),
         size: (width: Int, height: Int), sourcePixelFormat: AVPixelFormat,
         encoderPixelFormat chosen: AVPixelFormat, color: ColorDescription, settings: EncoderSettings,
         commit: CommitPolicy = .replace) throws {
        self.path = path
        file = try OutputFile(path: path, policy: commit)
        if let reader, SameFile.check(path, reader.info.path) {
            throw MediaError.output(path: path, reason: "the output would overwrite the input")
        }

        let (codec, still) = try Self.encoder(for: path, settings: settings)
        isStillImage = still
        packet = try MediaPacket()
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        let allocated = avformat_alloc_output_context2(&context, nil, nil, path)
        guard allocated >= 0, let context else { throw Self.unknownFormat(path) }
        formatContext = context
        // Every stored property has a value from here on, so a throw below runs deinit,
        // which closes and removes whatever was opened.
        let outputFormat = context.pointee.oformat!
        let codecID = codec.pointee.id
        guard let allocated = avcodec_alloc_context3(codec) else { throw MediaError.encode("out of memory") }
        self.encoder = allocated
        let encoder = allocated
        let input = reader?.videoStream
        let (width, height) = size
        encoder.pointee.width = Int32(width)
        encoder.pointee.height = Int32(height)
        let inputTimeBase = input?.pointee.time_base ?? AVRational(num: frameRate.den, den: frameRate.num)
        encoder.pointee.time_base = inputTimeBase.num > 0 ? inputTimeBase : AVRational(num: 1, den: 25)
        let rate = reader.map { av_guess_frame_rate($0.formatContext, input, nil) } ?? frameRate
        if rate.num > 0 { encoder.pointee.framerate = rate }
        if let input { encoder.pointee.sample_aspect_ratio = input.pointee.codecpar.pointee.sample_aspect_ratio }
        encoder.pointee.pix_fmt = chosen
        framePixelFormat = sourcePixelFormat
        encoder.pointee.color_primaries = AVColorPrimaries(rawValue: UInt32(color.primaries))
        encoder.pointee.color_trc = AVColorTransferCharacteristic(rawValue: UInt32(color.transfer))
        encoder.pointee.colorspace = AVColorSpace(rawValue: UInt32(color.colorSpace))
        encoder.pointee.color_range = color.fullRange ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG
        encoder.pointee.chroma_sample_location = AVChromaLocation(rawValue: UInt32(color.chromaLocation))
        if outputFormat.pointee.flags & AVFMT_GLOBALHEADER != 0 {
            encoder.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        }
        if codecID == AV_CODEC_ID_MJPEG {
            encoder.pointee.flags |= Int32(AV_CODEC_FLAG_QSCALE)
            encoder.pointee.global_quality = Int32(settings.jpegQuality) * FF_QP2LAMBDA
        }
        if !isStillImage {
            av_opt_set(encoder.pointee.priv_data, "crf", "\(settings.crf)", 0)
            av_opt_set(encoder.pointee.priv_data, "preset", settings.preset, 0)
            if settings.codec == .hevc { av_opt_set(encoder.pointee.priv_data, "x265-params", "log-level=error", 0) }
        }
        let opened = avcodec_open2(encoder, codec, nil)
        guard opened >= 0 else { throw MediaError.encode(ffmpegMessage(opened)) }
        if chosen != sourcePixelFormat {
            converter = sws_getContext(Int32(width), Int32(height), sourcePixelFormat, Int32(width), Int32(height), chosen,
                                       SWS_POINT | SWS_ACCURATE_RND | SWS_BITEXACT, nil, nil, nil)
            guard converter != nil else { throw MediaError.unsupported("no conversion to \(String(cString: av_get_pix_fmt_name(chosen)))") }
        }

        guard let stream = avformat_new_stream(context, nil) else { throw MediaError.encode("out of memory") }
        videoStream = stream
        try Self.check(avcodec_parameters_from_context(stream.pointee.codecpar, encoder), path)
        stream.pointee.time_base = encoder.pointee.time_base
        stream.pointee.avg_frame_rate = encoder.pointee.framerate
        if let reader, let input {
            if !isStillImage { try Self.check(velvet_copy_display_matrix(input, stream), path) }
            av_dict_copy(&stream.pointee.metadata, input.pointee.metadata, 0)
            av_dict_copy(&context.pointee.metadata, reader.formatContext.pointee.metadata, 0)
        }

        // Streams copied untouched (audio).
        if !isStillImage, let reader {
            for index in reader.copiedStreamIndices {
                let source = reader.formatContext.pointee.streams[index]!
                let codecID = source.pointee.codecpar.pointee.codec_id
                guard avformat_query_codec(outputFormat, codecID, FF_COMPLIANCE_NORMAL) == 1 else {
                    transcodedStreams[index] = try AudioTranscoder(input: source, context: context)
                    continue
                }
                guard let copy = avformat_new_stream(context, nil) else { throw MediaError.encode("out of memory") }
                try Self.check(avcodec_parameters_copy(copy.pointee.codecpar, source.pointee.codecpar), path)
                copy.pointee.codecpar.pointee.codec_tag = 0
                copy.pointee.time_base = source.pointee.time_base
                av_dict_copy(&copy.pointee.metadata, source.pointee.metadata, 0)
                copy.pointee.disposition = source.pointee.disposition
                copiedStreams[index] = (copy, source.pointee.time_base)
            }
        }

        // Open the temporary file (the image2 muxer opens its files itself).
        if isStillImage {
            av_opt_set(context.pointee.priv_data, "update", "1", 0)
            av_free(context.pointee.url)
            context.pointee.url = av_strdup(file.temporaryPath)
        } else {
            let opened = file.creating { avio_open(&context.pointee.pb, $0, AVIO_FLAG_WRITE) }
            guard opened >= 0 else { throw MediaError.output(path: path, reason: ffmpegMessage(opened)) }
        }
        let header = avformat_write_header(context, nil)
        guard header >= 0 else { throw MediaError.output(path: path, reason: ffmpegMessage(header)) }
    }

    deinit {
        if !finished { closeAndRemove() }
        sws_freeContext(converter)
    }

    /// Encodes one frame in `framePixelFormat` with its timestamp in the input's time base.
    func encode(_ frame: MediaFrame) throws {
        var source = frame
        if let converter {
            let converted = try MediaFrame()
            converted.pointer.pointee.format = encoder!.pointee.pix_fmt.rawValue
            converted.pointer.pointee.width = frame.pointer.pointee.width
            converted.pointer.pointee.height = frame.pointer.pointee.height
            let scaled = sws_scale_frame(converter, converted.pointer, frame.pointer)
            guard scaled >= 0 else { throw MediaError.encode(ffmpegMessage(scaled)) }
            converted.pointer.pointee.pts = frame.pointer.pointee.pts
            source = converted
        }
        // A decoded frame remembers its old picture type; x264 would obey it. Let the encoder choose.
        source.pointer.pointee.pict_type = AV_PICTURE_TYPE_NONE
        let sent = avcodec_send_frame(encoder, source.pointer)
        guard sent >= 0 else { throw MediaError.encode(ffmpegMessage(sent)) }
        framesWritten += 1
        try drainEncoder()
    }

    /// Writes a packet of a copied stream (timestamps in the input stream's time base).
    func writeCopied(_ copied: MediaPacket, inputStreamIndex: Int) throws {
        if let transcoder = transcodedStreams[inputStreamIndex] {
            try transcoder.transcode(copied, write: writeInterleaved)
            return
        }
        guard let target = copiedStreams[inputStreamIndex] else { return }
        av_packet_rescale_ts(copied.pointer, target.inputTimeBase, target.output.pointee.time_base)
        copied.pointer.pointee.stream_index = target.output.pointee.index
        copied.pointer.pointee.pos = -1
        let written = av_interleaved_write_frame(formatContext, copied.pointer)
        guard written >= 0 else { throw MediaError.output(path: path, reason: ffmpegMessage(written)) }
    }

    /// Flushes the encoder, writes the trailer and moves the file to its final path.
    func finish() throws {
        let sent = avcodec_send_frame(encoder, nil)
        guard sent >= 0 || sent == velvet_averror_eof() else { throw MediaError.encode(ffmpegMessage(sent)) }
        try drainEncoder()
        for transcoder in transcodedStreams.values { try transcoder.finish(write: writeInterleaved) }
        let trailer = av_write_trailer(formatContext)
        guard trailer >= 0 else { throw MediaError.output(path: path, reason: ffmpegMessage(trailer)) }
        if !isStillImage {
            let closed = avio_closep(&formatContext.pointee.pb)
            guard closed >= 0 else { throw MediaError.output(path: path, reason: ffmpegMessage(closed)) }
        }
        try file.commit()
        finished = true
        releaseContexts()
    }

    /// Drops everything written so far (called on failure or interruption).
    func abort() {
        guard !finished else { return }
        closeAndRemove()
        finished = true
    }

    private func writeInterleaved(_ packet: UnsafeMutablePointer<AVPacket>) throws {
        let written = av_interleaved_write_frame(formatContext, packet)
        guard written >= 0 else { throw MediaError.output(path: path, reason: ffmpegMessage(written)) }
    }

    private func drainEncoder() throws {
        while true {
            let received = avcodec_receive_packet(encoder, packet.pointer)
            if received == velvet_averror_eagain() || received == velvet_averror_eof() { return }
            guard received >= 0 else { throw MediaError.encode(ffmpegMessage(received)) }
            av_packet_rescale_ts(packet.pointer, encoder!.pointee.time_base, videoStream.pointee.time_base)
            packet.pointer.pointee.stream_index = videoStream.pointee.index
            // The image2 muxer creates a still's file as it writes the packet.
            let written = isStillImage ? file.creating { _ in av_interleaved_write_frame(formatContext, packet.pointer) }
                                       : av_interleaved_write_frame(formatContext, packet.pointer)
            guard written >= 0 else { throw MediaError.output(path: path, reason: ffmpegMessage(written)) }
        }
    }

    private func closeAndRemove() {
        if !isStillImage, formatContext.pointee.pb != nil { avio_closep(&formatContext.pointee.pb) }
        releaseContexts()
        file.discard()
    }

    private var released = false
    private func releaseContexts() {
        guard !released else { return }
        released = true
        transcodedStreams.removeAll()
        avcodec_free_context(&encoder)
        avformat_free_context(formatContext)
    }

    /// The encoder's format: the requested one, else the source's if the encoder takes it,
    /// else yuv420p (yuv420p10le for deep sources; rgb24/rgba for PNG).
    static func encoderPixelFormat(codec: UnsafePointer<AVCodec>, source: AVPixelFormat, requested: String?,
                                   still: Bool) throws -> AVPixelFormat {
        var supported: [AVPixelFormat] = []
        if var cursor = codec.pointee.pix_fmts {
            while cursor.pointee != AV_PIX_FMT_NONE { supported.append(cursor.pointee); cursor += 1 }
        }
        if let requested {
            let format = av_get_pix_fmt(requested)
            guard format != AV_PIX_FMT_NONE, supported.contains(format) else {
                throw MediaError.unsupported("pixel format '\(requested)' for \(String(cString: codec.pointee.name)); it takes "
                                             + supported.map { String(cString: av_get_pix_fmt_name($0)) }.joined(separator: ", "))
            }
            return format
        }
        if supported.contains(source) { return source }
        let deep = (av_pix_fmt_desc_get(source)?.pointee.comp.0.depth ?? 8) > 8
        let hasAlpha = (av_pix_fmt_desc_get(source)?.pointee.flags ?? 0) & UInt64(AV_PIX_FMT_FLAG_ALPHA) != 0
        let candidates: [AVPixelFormat] = still
            ? (hasAlpha ? [AV_PIX_FMT_RGBA, AV_PIX_FMT_RGB24] : [AV_PIX_FMT_RGB24, AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ444P])
            : (deep ? [AV_PIX_FMT_YUV420P10LE, AV_PIX_FMT_YUV420P] : [AV_PIX_FMT_YUV420P])
        guard let format = candidates.first(where: supported.contains) ?? supported.first else {
            throw MediaError.unsupported("\(String(cString: codec.pointee.name)) takes no pixel format we produce")
        }
        return format
    }

    /// The encoder for an output path (by its extension) and whether it is a still image.
    static func encoder(for path: String, settings: EncoderSettings) throws -> (UnsafePointer<AVCodec>, still: Bool) {
        guard let format = av_guess_format(nil, path, nil) else { throw unknownFormat(path) }
        let still = String(cString: format.pointee.name) == "image2"
        let name: String? = still ? nil : settings.codec.encoderName
        // image2 picks its codec by extension (.png -> png, .jpg -> mjpeg).
        let stillCodec = av_guess_codec(format, nil, path, nil, AVMEDIA_TYPE_VIDEO)
        guard let codec = name.map({ avcodec_find_encoder_by_name($0) }) ?? avcodec_find_encoder(stillCodec) else {
            throw MediaError.encode("no encoder \(name ?? "") for \(path)")
        }
        return (codec, still)
    }

    private static func unknownFormat(_ path: String) -> MediaError {
        .output(path: path, reason: "unknown output format '.\(URL(fileURLWithPath: path).pathExtension)' (use .mp4, .mkv, .mov, .png, .jpg, ...)")
    }

    private static func check(_ code: Int32, _ path: String) throws {
        if code < 0 { throw MediaError.output(path: path, reason: ffmpegMessage(code)) }
    }
}
