import CFFmpeg

/// Re-encodes an audio stream (to AAC, or Opus for WebM) for a container that cannot hold its
/// codec (PCM in MP4, say). Streams a container can hold are copied untouched instead; this is
/// the fallback. Decode -> resample to the encoder's rate and sample format -> FIFO of
/// encoder-sized frames -> encode.
final class AudioTranscoder: @unchecked Sendable {
    let output: UnsafeMutablePointer<AVStream>
    private var decoder: UnsafeMutablePointer<AVCodecContext>?
    private var encoder: UnsafeMutablePointer<AVCodecContext>?
    private var resampler: OpaquePointer?
    private let fifo: OpaquePointer
    private let inputTimeBase: AVRational
    private var samplesWritten: Int64 = 0
    private var started = false
    private let decoded: MediaFrame
    private let packet: MediaPacket
    /// The encoder's sample format: planar float where it takes it (AAC, Vorbis), else its first.
    private let sampleFormat: AVSampleFormat

    init(input: UnsafeMutablePointer<AVStream>, to codec: AVCodecID, context: UnsafeMutablePointer<AVFormatContext>) throws {
        let parameters = input.pointee.codecpar!
        guard let decoderCodec = avcodec_find_decoder(parameters.pointee.codec_id),
              let encoderCodec = avcodec_find_encoder(codec) else {
            throw MediaError.unsupported("cannot re-encode the \(String(cString: avcodec_get_name(parameters.pointee.codec_id))) audio track")
        }
        inputTimeBase = input.pointee.time_base
        decoded = try MediaFrame()
        packet = try MediaPacket()
        decoder = avcodec_alloc_context3(decoderCodec)
        encoder = avcodec_alloc_context3(encoderCodec)
        guard let decoder, let encoder, let stream = avformat_new_stream(context, nil) else {
            throw MediaError.encode("out of memory")
        }
        output = stream
        try Self.check(avcodec_parameters_to_context(decoder, parameters))
        decoder.pointee.pkt_timebase = input.pointee.time_base
        try Self.check(avcodec_open2(decoder, decoderCodec, nil))

        encoder.pointee.sample_rate = Self.closestRate(to: decoder.pointee.sample_rate, of: encoderCodec)
        if decoder.pointee.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC {
            // Only a channel count is known (PCM in Matroska): take the default layout for it.
            av_channel_layout_default(&decoder.pointee.ch_layout, decoder.pointee.ch_layout.nb_channels)
        }
        var layout = Self.layout(for: decoder.pointee.ch_layout, of: encoderCodec)
        try Self.check(av_channel_layout_copy(&encoder.pointee.ch_layout, &layout))
        sampleFormat = Self.sampleFormat(of: encoderCodec)
        encoder.pointee.sample_fmt = sampleFormat
        let channels = Int(max(encoder.pointee.ch_layout.nb_channels, 1))
        if codec == AV_CODEC_ID_VORBIS {
            // libvorbis has no bit-rate mode at every rate (96 kHz): its quality scale, as ffmpeg's -q:a 4.
            encoder.pointee.flags |= Int32(AV_CODEC_FLAG_QSCALE)
            encoder.pointee.global_quality = 4 * FF_QP2LAMBDA
        } else {
            // 96 kb/s per channel, but never past what AAC can spend per frame at low sample rates.
            encoder.pointee.bit_rate = Int64(min(96_000 * channels, 4 * Int(encoder.pointee.sample_rate) * channels))
        }
        encoder.pointee.time_base = AVRational(num: 1, den: encoder.pointee.sample_rate)
        if context.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 {
            encoder.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        }
        let opened = LogCapture.firstError { avcodec_open2(encoder, encoderCodec, nil) }
        if opened.result < 0 {
            var description = [CChar](repeating: 0, count: 64)
            av_channel_layout_describe(&decoder.pointee.ch_layout, &description, description.count)
            let reason = opened.logged.split(whereSeparator: \.isNewline).first.map(String.init) ?? ffmpegMessage(opened.result)
            throw MediaError.encode("input stream #\(input.pointee.index) (\(String(cString: decoderCodec.pointee.name)) audio, "
                                    + "\(decoder.pointee.sample_rate) Hz, \(String(cString: description))) cannot be re-encoded to "
                                    + "\(String(cString: encoderCodec.pointee.name)): \(reason)")
        }
        try Self.check(avcodec_parameters_from_context(stream.pointee.codecpar, encoder))
        stream.pointee.time_base = encoder.pointee.time_base
        EncodedStreamTags.copy(from: input, to: stream, encoder: encoderCodec)

        try Self.check(swr_alloc_set_opts2(&resampler, &encoder.pointee.ch_layout, sampleFormat, encoder.pointee.sample_rate,
                                           &decoder.pointee.ch_layout, decoder.pointee.sample_fmt, decoder.pointee.sample_rate, 0, nil))
        try Self.check(swr_init(resampler))
        guard let fifo = av_audio_fifo_alloc(sampleFormat, encoder.pointee.ch_layout.nb_channels, 4096) else {
            throw MediaError.encode("out of memory")
        }
        self.fifo = fifo
    }

    deinit {
        av_audio_fifo_free(fifo)
        swr_free(&resampler)
        avcodec_free_context(&decoder)
        avcodec_free_context(&encoder)
    }

    /// Decodes one input packet and writes every AAC packet that becomes ready.
    func transcode(_ input: MediaPacket, write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        try Self.check(avcodec_send_packet(decoder, input.pointer))
        try drainDecoder(write: write)
    }

    /// Flushes decoder, FIFO and encoder at the end of the stream.
    func finish(write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        avcodec_send_packet(decoder, nil)
        try drainDecoder(write: write)
        try encodeFromFIFO(flushing: true, write: write)
        avcodec_send_frame(encoder, nil)
        try drainEncoder(write: write)
    }

    private func drainDecoder(write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        while avcodec_receive_frame(decoder, decoded.pointer) >= 0 {
            if !started {
                // Keep the track's start time.
                let pts = decoded.pointer.pointee.best_effort_timestamp
                if pts != velvet_av_nopts_value() { samplesWritten = av_rescale_q(pts, inputTimeBase, encoder!.pointee.time_base) }
                started = true
            }
            let capacity = swr_get_out_samples(resampler, decoded.pointer.pointee.nb_samples)
            let converted = try encoderFrame(samples: capacity)
            let count = swr_convert(resampler, velvet_frame_mutable_data(converted.pointer), capacity,
                                    velvet_frame_const_data(decoded.pointer), decoded.pointer.pointee.nb_samples)
            try Self.check(count)
            av_frame_unref(decoded.pointer)
            guard av_audio_fifo_write(fifo, velvet_frame_data_pointers(converted.pointer), count) == count else {
                throw MediaError.encode("audio buffer overflow")
            }
            try encodeFromFIFO(flushing: false, write: write)
        }
    }

    private func encodeFromFIFO(flushing: Bool, write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        // Encoders that take any frame size (frame_size 0) get AAC's 1024.
        let frameSize = encoder!.pointee.frame_size > 0 ? Int32(encoder!.pointee.frame_size) : 1024
        while av_audio_fifo_size(fifo) >= frameSize || (flushing && av_audio_fifo_size(fifo) > 0) {
            let count = min(frameSize, av_audio_fifo_size(fifo))
            let frame = try encoderFrame(samples: count)
            guard av_audio_fifo_read(fifo, velvet_frame_data_pointers(frame.pointer), count) == count else {
                throw MediaError.encode("audio buffer underflow")
            }
            frame.pointer.pointee.pts = samplesWritten
            samplesWritten += Int64(count)
            try Self.check(avcodec_send_frame(encoder, frame.pointer))
            try drainEncoder(write: write)
        }
    }

    /// An empty frame of `samples` in the encoder's sample format, layout and rate.
    private func encoderFrame(samples: Int32) throws -> MediaFrame {
        let frame = try MediaFrame()
        frame.pointer.pointee.format = sampleFormat.rawValue
        frame.pointer.pointee.nb_samples = samples
        frame.pointer.pointee.sample_rate = encoder!.pointee.sample_rate
        try Self.check(av_channel_layout_copy(&frame.pointer.pointee.ch_layout, &encoder!.pointee.ch_layout))
        try Self.check(av_frame_get_buffer(frame.pointer, 0))
        return frame
    }

    private func drainEncoder(write: (UnsafeMutablePointer<AVPacket>) throws -> Void) throws {
        while avcodec_receive_packet(encoder, packet.pointer) >= 0 {
            av_packet_rescale_ts(packet.pointer, encoder!.pointee.time_base, output.pointee.time_base)
            packet.pointer.pointee.stream_index = output.pointee.index
            try write(packet.pointer)
        }
    }

    private static func sampleFormat(of codec: UnsafePointer<AVCodec>) -> AVSampleFormat {
        guard var cursor = codec.pointee.sample_fmts else { return AV_SAMPLE_FMT_FLTP }
        var formats: [AVSampleFormat] = []
        while cursor.pointee != AV_SAMPLE_FMT_NONE { formats.append(cursor.pointee); cursor += 1 }
        return formats.contains(AV_SAMPLE_FMT_FLTP) ? AV_SAMPLE_FMT_FLTP : formats.first ?? AV_SAMPLE_FMT_FLTP
    }

    /// The decoder's channel layout, or where the encoder lists the layouts it takes and this
    /// is none of them (Opus and Vorbis take 5.1 with back, not side, channels), the listed one
    /// of as many channels; the resampler moves the channels (side to back), as ffmpeg's does.
    private static func layout(for layout: AVChannelLayout, of codec: UnsafePointer<AVCodec>) -> AVChannelLayout {
        var candidates: [AVChannelLayout] = []
        if var cursor = codec.pointee.ch_layouts {
            while cursor.pointee.nb_channels != 0 { candidates.append(cursor.pointee); cursor += 1 }
        } else if [AV_CODEC_ID_OPUS, AV_CODEC_ID_VORBIS].contains(codec.pointee.id) {
            // libopus lists none, and takes more than two channels in Vorbis's layouts alone.
            candidates = vorbisLayoutMasks.map { mask in
                var listed = AVChannelLayout()
                av_channel_layout_from_mask(&listed, mask)
                return listed
            }
        }
        guard !candidates.isEmpty, layout.nb_channels > 2 || codec.pointee.ch_layouts != nil else { return layout }
        var wanted = layout
        if candidates.contains(where: { var listed = $0; return av_channel_layout_compare(&listed, &wanted) == 0 }) { return layout }
        return candidates.first { $0.nb_channels == layout.nb_channels } ?? candidates.last { $0.nb_channels <= layout.nb_channels } ?? layout
    }

    /// Vorbis's channel layouts (mono, stereo, 3.0, quad, 5.0 and 5.1 with back channels, 6.1, 7.1), as masks.
    private static let vorbisLayoutMasks: [UInt64] = [0x4, 0x3, 0x7, 0x33, 0x37, 0x3F, 0x70F, 0x63F]

    /// AAC takes only standard rates (an 11024 Hz track becomes 11025 Hz, resampled).
    private static func closestRate(to rate: Int32, of codec: UnsafePointer<AVCodec>) -> Int32 {
        guard var cursor = codec.pointee.supported_samplerates else { return rate }
        var best = rate, bestDistance = Int32.max
        while cursor.pointee != 0 {
            let distance = abs(cursor.pointee - rate)
            if distance < bestDistance { (best, bestDistance) = (cursor.pointee, distance) }
            cursor += 1
        }
        return best
    }

    private static func check(_ code: Int32) throws {
        if code < 0 { throw MediaError.encode("audio: \(ffmpegMessage(code))") }
    }
}
