import CFFmpeg

/// Converts a text subtitle stream into the text format the container takes (SubRip into
/// mov_text for MP4): each event is decoded to its text and styling and encoded again with
/// the same timing. Streams the container holds as they are are copied instead.
final class SubtitleConverter: @unchecked Sendable {
    let output: UnsafeMutablePointer<AVStream>
    private var decoder: UnsafeMutablePointer<AVCodecContext>?
    private var encoder: UnsafeMutablePointer<AVCodecContext>?
    private let packet: MediaPacket
    /// Events are timed in microseconds (AVSubtitle's pts) and milliseconds (display times).
    private static let microseconds = AVRational(num: 1, den: Int32(AV_TIME_BASE))
    private static let milliseconds = AVRational(num: 1, den: 1000)

    init(input: UnsafeMutablePointer<AVStream>, target: AVCodecID, context: UnsafeMutablePointer<AVFormatContext>) throws {
        let parameters = input.pointee.codecpar!
        let name = String(cString: avcodec_get_name(parameters.pointee.codec_id))
        guard let decoderCodec = avcodec_find_decoder(parameters.pointee.codec_id), let encoderCodec = avcodec_find_encoder(target) else {
            throw MediaError.unsupported("cannot convert the \(name) subtitles to \(String(cString: avcodec_get_name(target)))")
        }
        packet = try MediaPacket()
        decoder = avcodec_alloc_context3(decoderCodec)
        encoder = avcodec_alloc_context3(encoderCodec)
        guard let decoder, let encoder, let stream = avformat_new_stream(context, nil) else { throw MediaError.encode("out of memory") }
        output = stream
        try Self.check(avcodec_parameters_to_context(decoder, parameters))
        decoder.pointee.pkt_timebase = input.pointee.time_base
        try Self.check(avcodec_open2(decoder, decoderCodec, nil))

        // The encoder styles events with the decoder's ASS header, as ffmpeg does.
        if let header = decoder.pointee.subtitle_header, decoder.pointee.subtitle_header_size > 0 {
            let size = Int(decoder.pointee.subtitle_header_size)
            guard let copy = av_mallocz(size + 1) else { throw MediaError.encode("out of memory") }
            copy.copyMemory(from: header, byteCount: size)
            encoder.pointee.subtitle_header = copy.assumingMemoryBound(to: UInt8.self)
            encoder.pointee.subtitle_header_size = Int32(size)
        }
        encoder.pointee.time_base = Self.milliseconds
        if context.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 {
            encoder.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        }
        try Self.check(avcodec_open2(encoder, encoderCodec, nil))
        try Self.check(avcodec_parameters_from_context(stream.pointee.codecpar, encoder))
        stream.pointee.time_base = Self.milliseconds
        av_dict_copy(&stream.pointee.metadata, input.pointee.metadata, 0)
        stream.pointee.disposition = input.pointee.disposition
    }

    deinit {
        avcodec_free_context(&decoder)
        avcodec_free_context(&encoder)
    }

    /// Decodes one input packet and writes the converted event, if it holds one.
    func convert(_ input: MediaPacket, write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        var subtitle = AVSubtitle()
        var got: Int32 = 0
        try Self.check(avcodec_decode_subtitle2(decoder, &subtitle, &got, input.pointer))
        guard got != 0 else { return }
        defer { avsubtitle_free(&subtitle) }
        if subtitle.pts == velvet_av_nopts_value() {
            subtitle.pts = av_rescale_q(input.pointer.pointee.pts, decoder!.pointee.pkt_timebase, Self.microseconds)
        }
        // The event's start moves into its pts, so the display times count from zero.
        subtitle.pts += av_rescale_q(Int64(subtitle.start_display_time), Self.milliseconds, Self.microseconds)
        subtitle.end_display_time -= subtitle.start_display_time
        subtitle.start_display_time = 0

        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        let size = avcodec_encode_subtitle(encoder, &buffer, Int32(buffer.count), &subtitle)
        try Self.check(size)
        guard size > 0 else { return }
        try Self.check(av_new_packet(packet.pointer, size))
        buffer.withUnsafeBytes { packet.pointer.pointee.data.update(from: $0.baseAddress!.assumingMemoryBound(to: UInt8.self), count: Int(size)) }
        packet.pointer.pointee.pts = av_rescale_q(subtitle.pts, Self.microseconds, output.pointee.time_base)
        packet.pointer.pointee.dts = packet.pointer.pointee.pts
        packet.pointer.pointee.duration = av_rescale_q(Int64(subtitle.end_display_time), Self.milliseconds, output.pointee.time_base)
        packet.pointer.pointee.stream_index = output.pointee.index
        try write(packet.pointer)
        av_packet_unref(packet.pointer)
    }

    private static func check(_ code: Int32) throws {
        if code < 0 { throw MediaError.encode("subtitles: \(ffmpegMessage(code))") }
    }
}
