import CFFmpeg
import Foundation
import VelvetFiles

/// What the writer sets up besides the encoded video: where the input's other streams go,
/// whether the display matrix is kept, HDR metadata and field order.
struct WriterSetup {
    var routes: [Int: OutputPlan.StreamRoute] = [:]
    var keepsDisplayMatrix = false
    var hdr: HDRMetadata?
    var fieldOrder = AV_FIELD_PROGRESSIVE
    /// The pixels are turned a quarter from the input's stored frame: its pixel aspect ratio is inverted.
    var turnsAQuarter = false
    /// The input's ICC profile, given to every frame encoded (encoders of pictures write it).
    var iccProfile: [UInt8]?

    init(routes: [Int: OutputPlan.StreamRoute] = [:], keepsDisplayMatrix: Bool = false, hdr: HDRMetadata? = nil,
         fieldOrder: AVFieldOrder = AV_FIELD_PROGRESSIVE, turnsAQuarter: Bool = false, iccProfile: [UInt8]? = nil) {
        (self.routes, self.keepsDisplayMatrix, self.hdr, self.fieldOrder) = (routes, keepsDisplayMatrix, hdr, fieldOrder)
        (self.turnsAQuarter, self.iccProfile) = (turnsAQuarter, iccProfile)
    }
}

/// Encodes and muxes the output. Everything is written to a temporary file beside the
/// requested path (`OutputFile`) and moved into place only by `finish()`, so a failure or a
/// signal never leaves a half-written file at that path. Standard output (`-`) is written as
/// it goes: there is no file to hold back, replace or remove.
final class MediaWriter: @unchecked Sendable {
    let path: String
    /// Nil for standard output and for an image sequence.
    private let file: OutputFile?
    /// The files of an image sequence output (`frame%04d.png`).
    private let sequence: PictureSequenceOutput?
    /// The commit policy's last step where no single file is renamed into place (standard
    /// output, a sequence): run once, as `finish` ends.
    private let beforeCommit: (@Sendable (String) throws -> Void)?
    /// The commit's preparation where no `OutputFile` runs it (a sequence, standard output).
    private let prepareCommit: (@Sendable () throws -> Void)?
    /// Takes the finished file instead of `finish` committing it (`CommitPolicy.handOver`).
    private let handOver: (@Sendable (OutputFile) -> Void)?
    /// The pixel format `encode` expects frames in.
    private(set) var framePixelFormat = AV_PIX_FMT_NONE
    /// One picture: the render ends after its frame.
    let isStillImage: Bool
    /// A picture format (image2), whose muxer opens each picture's file itself.
    private let writesPictures: Bool
    private let formatContext: UnsafeMutablePointer<AVFormatContext>
    private var encoder: UnsafeMutablePointer<AVCodecContext>?
    private var videoStream: UnsafeMutablePointer<AVStream>!
    /// Input stream index -> output stream, for streams copied untouched.
    private var copiedStreams: [Int: (output: UnsafeMutablePointer<AVStream>, inputTimeBase: AVRational)] = [:]
    /// Input stream index -> AAC re-encoder, for audio the container cannot hold as it is.
    private var transcodedStreams: [Int: AudioTranscoder] = [:]
    /// Input stream index -> converter, for text subtitles the container takes in another format.
    private var convertedSubtitles: [Int: SubtitleConverter] = [:]
    private let packet: MediaPacket
    /// Only when the encoder takes another format than the GPU writes.
    private let repacker: PixelRepacker?
    private var finished = false
    /// Whether x264 codes the fields (an interlaced output).
    private var codesFields = false
    /// Registered as a stream being sent (`UnfinishedFiles.streaming`) until it is closed.
    private var sendsToStandardOutput = false
    var isFinished: Bool { finished }
    private(set) var framesWritten = 0
    /// Whether what is written is sent as it goes (standard output, a FIFO or device), so a
    /// failed render cannot take it back.
    var sendsAsItWrites: Bool { file?.writesInPlace ?? (sequence == nil) }
    /// The time base of the frames `encode` is given (the input stream's).
    private var frameTimeBase = AVRational(num: 1, den: 25)
    private var iccProfile: [UInt8]?
    /// Added to every stream's timestamps (`MediaReader.outputStartShift`).
    private var startShift: Int64 = 0
    /// Each routed input stream's time base, for the shift.
    private var inputTimeBases: [Int: AVRational] = [:]
    /// The passed-through streams' timestamps, kept increasing, by input stream index.
    private var timelines: [Int: PacketTimeline] = [:]
    /// y4m states one frame rate (its header's, from the stream's time base) and no
    /// timestamps, Theora counts frames, AVI holds a frame per tick: frames are numbered in a
    /// time base of one frame.
    private var numbersFrames = false
    /// Keeps the frames' timestamps apart on the muxer's clock (set once the header fixed it).
    private var clock: OutputClock?
    /// Where `numbersFrames`: each frame's tick, and the last frame sent, to repeat over a gap.
    private var slots: FrameSlots?
    private var lastSent: UnsafeMutablePointer<AVFrame>?

    /// - Parameters:
    ///   - sourcePixelFormat: the format the pipeline produces (a GPU plane layout).
    ///   - encoderPixelFormat: the format to encode (swscale converts when it differs).
    ///   - color: the colour tags to write.
    ///   - reader: the input whose timing, metadata, chapters and other streams the output
    ///     keeps; nil for synthesised video (then `frameRate` sets the timing).
    ///   - setup: what happens to those streams, the display matrix, HDR metadata, field order.
    init(path: String, reader: MediaReader?, frameRate: AVRational = AVRational(num: 25, den: 1),
         size: (width: Int, height: Int), sourcePixelFormat: AVPixelFormat,
         encoderPixelFormat chosen: AVPixelFormat, color: ColorDescription, settings: EncoderSettings,
         setup: WriterSetup = WriterSetup(), commit: CommitPolicy = .replace) throws {
        self.path = path
        let container = try OutputContainer(path: path, formatName: settings.format)
        let framePolicy = CommitPolicy(replacesExisting: commit.replacesExisting)
        sequence = container.isSequence ? try PictureSequenceOutput(pattern: path, policy: framePolicy, input: reader?.info.path) : nil
        file = container.isStandardOutput || container.isSequence ? nil : try OutputFile(path: path, policy: commit)
        beforeCommit = file == nil ? commit.beforeRename : nil
        prepareCommit = file == nil ? commit.prepare : nil
        handOver = commit.handOver
        if let reader, !container.isStandardOutput, !reader.isStandardInput, SameFile.check(path, reader.info.path) {
            throw MediaError.output(path: path, reason: "the output would overwrite the input")
        }

        let codec = try EncoderTuning.encoder(for: container, settings: settings)
        isStillImage = container.isStillImage
        writesPictures = container.writesPictures
        packet = try MediaPacket()
        repacker = chosen != sourcePixelFormat ? PixelRepacker() : nil
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        let allocated = avformat_alloc_output_context2(&context, container.format, nil, path)
        guard allocated >= 0, let context else { throw OutputContainer.unknownFormat(path) }
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
        let rate = reader.map { av_guess_frame_rate($0.formatContext, input, nil) } ?? frameRate
        if rate.num > 0 { encoder.pointee.framerate = container.name == "avi" ? Self.aviRate(rate) : rate }
        // AVI holds one frame per tick of its stream's rate: the input's time base (1/12800)
        // made a "12800 fps" file of empty ticks, which players and velvet read as damaged.
        numbersFrames = ["yuv4mpegpipe", "avi"].contains(container.name) || EncoderTuning.numbersFrames(codec)
        iccProfile = setup.iccProfile
        encoder.pointee.time_base = numbersFrames ? EncoderTuning.frameTimeBase(container.name == "avi" ? Self.aviRate(rate) : rate)
            : EncoderTuning.timeBase(for: codec, input: inputTimeBase, frameRate: rate)
        frameTimeBase = inputTimeBase.num > 0 ? inputTimeBase : encoder.pointee.time_base
        // The container's pixel aspect ratio (MP4's pasp, Matroska's display size) or else the
        // bitstream's, as ffmpeg keeps it.
        if let reader, let input {
            let aspect = av_guess_sample_aspect_ratio(reader.formatContext, input, nil)
            encoder.pointee.sample_aspect_ratio = setup.turnsAQuarter && aspect.num > 0 ? AVRational(num: aspect.den, den: aspect.num) : aspect
        }
        encoder.pointee.pix_fmt = chosen
        framePixelFormat = sourcePixelFormat
        encoder.pointee.color_primaries = AVColorPrimaries(rawValue: UInt32(color.primaries))
        encoder.pointee.color_trc = AVColorTransferCharacteristic(rawValue: UInt32(color.transfer))
        if ColorDescription.isRGB(chosen) {
            // R'G'B' samples: full range, no YUV matrix (they were tagged with the input's, `tv` and BT.709).
            encoder.pointee.colorspace = AVCOL_SPC_RGB
            encoder.pointee.color_range = AVCOL_RANGE_JPEG
        } else {
            encoder.pointee.colorspace = AVColorSpace(rawValue: UInt32(color.colorSpace))
            encoder.pointee.color_range = !color.statesRange ? AVCOL_RANGE_UNSPECIFIED : color.fullRange ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG
        }
        encoder.pointee.chroma_sample_location = color.statesChromaLocation
            ? AVChromaLocation(rawValue: UInt32(color.chromaLocation)) : AVCHROMA_LOC_UNSPECIFIED
        encoder.pointee.field_order = setup.fieldOrder
        let encoderName = String(cString: codec.pointee.name)
        if setup.fieldOrder != AV_FIELD_PROGRESSIVE && setup.fieldOrder != AV_FIELD_UNKNOWN && encoderName == "libx264" {
            // x264 codes the fields (its field order follows each frame's top_field_first);
            // x265 has no interlaced coding in FFmpeg 5.1, so HEVC keeps the field order as a tag.
            encoder.pointee.flags |= Int32(AV_CODEC_FLAG_INTERLACED_DCT | AV_CODEC_FLAG_INTERLACED_ME)
            codesFields = true
        }
        if outputFormat.pointee.flags & AVFMT_GLOBALHEADER != 0 {
            encoder.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        }
        if codecID == AV_CODEC_ID_MJPEG {
            encoder.pointee.flags |= Int32(AV_CODEC_FLAG_QSCALE)
            encoder.pointee.global_quality = Int32(settings.jpegQuality) * FF_QP2LAMBDA
        }
        try EncoderTuning.apply(settings, to: encoder, hdr: writesPictures ? nil : setup.hdr)
        let opened = avcodec_open2(encoder, codec, nil)
        guard opened >= 0 else { throw EncoderTuning.openFailure(codec, opened) }

        guard let stream = avformat_new_stream(context, nil) else { throw MediaError.encode("out of memory") }
        videoStream = stream
        try Self.check(avcodec_parameters_from_context(stream.pointee.codecpar, encoder), path)
        if codecID == AV_CODEC_ID_HEVC && container.isQuickTime {
            // hvc1: parameter sets only in the sample entry, the tag Apple's players require.
            stream.pointee.codecpar.pointee.codec_tag = velvet_fourcc(0x68, 0x76, 0x63, 0x31)
        }
        stream.pointee.time_base = encoder.pointee.time_base
        stream.pointee.avg_frame_rate = encoder.pointee.framerate
        stream.pointee.sample_aspect_ratio = encoder.pointee.sample_aspect_ratio // what y4m's header reads
        if let hdr = setup.hdr { try Self.check(hdr.attach(to: stream), path) }
        if let reader, let input {
            if setup.keepsDisplayMatrix { try Self.check(velvet_copy_display_matrix(input, stream), path) }
            EncodedStreamTags.copy(from: input, to: stream, encoder: codec)
            av_dict_copy(&context.pointee.metadata, reader.formatContext.pointee.metadata, 0)
            if !writesPictures { try Self.check(velvet_copy_chapters(reader.formatContext, context), path) }
        }

        if let reader, !writesPictures { startShift = reader.outputStartShift }

        // The input's other streams, as the plan routes them.
        if !writesPictures, let reader {
            for (index, route) in setup.routes.sorted(by: { $0.key < $1.key }) {
                let source = reader.formatContext.pointee.streams[index]!
                inputTimeBases[index] = source.pointee.time_base
                switch route {
                case .copy: copiedStreams[index] = (try Self.addCopy(of: source, to: context, path), source.pointee.time_base)
                case .reencodeAudio(let codec): transcodedStreams[index] = try AudioTranscoder(input: source, to: codec, context: context)
                case .convertSubtitles(let target):
                    convertedSubtitles[index] = try SubtitleConverter(input: source, target: target, context: context)
                }
            }
        }

        // y4m writes deep and 4:4:0 formats only as "unofficial"; FFmpeg's own tools read them.
        if container.writesUnofficialFormats { context.pointee.strict_std_compliance = FF_COMPLIANCE_UNOFFICIAL }
        // Open the temporary file (the image2 muxer opens its files itself, each picture's under
        // the name in `url`, set before each is written), or standard output.
        if writesPictures {
            av_opt_set(context.pointee.priv_data, "update", "1", 0)
            if let file { setPictureFile(file.temporaryPath) }
        } else if let file {
            let opened = try file.creating { avio_open(&context.pointee.pb, $0, AVIO_FLAG_WRITE) }
            guard opened >= 0 else { throw MediaError.output(path: path, reason: ffmpegMessage(opened)) }
        } else {
            let opened = avio_open(&context.pointee.pb, "pipe:1", AVIO_FLAG_WRITE)
            guard opened >= 0 else { throw MediaError.output(path: path, reason: ffmpegMessage(opened)) }
            // What is sent cannot be taken back: a signal's line says the stream ends where it was cut.
            UnfinishedFiles.shared.streaming(OutputContainer.standardOutput)
            sendsToStandardOutput = true
        }
        // Why a muxer refuses its header (MXF at 10 fps) is only logged.
        let (header, logged) = LogCapture.firstError { avformat_write_header(context, nil) }
        guard header >= 0 else {
            let reason = logged.trimmingCharacters(in: .whitespacesAndNewlines)
            throw reason.isEmpty || header == -EPIPE ? failure(header) : MediaError.output(path: path, reason: reason)
        }
        // y4m, which holds no audio to keep in step with, keeps every frame, one after another;
        // picture files (image2) keep no timestamps, so nothing collides there.
        if numbersFrames {
            if container.name != "yuv4mpegpipe" {
                let duration = reader?.formatContext.pointee.duration ?? velvet_av_nopts_value()
                let end = duration != velvet_av_nopts_value() && duration > 0 ? Double(duration) / Double(AV_TIME_BASE) : nil
                slots = FrameSlots(tick: encoder.pointee.time_base, end: end)
            }
        } else if outputFormat.pointee.flags & AVFMT_NOTIMESTAMPS == 0 {
            clock = OutputClock(encoder: encoder.pointee.time_base, muxer: stream.pointee.time_base)
        }
    }

    /// What the output's clock could not hold, one line (nil when every frame was written).
    var warning: String? { clock?.warning(output: path) ?? slots?.warning(output: path) }

    deinit {
        if !finished { closeAndRemove() }
    }

    /// Encodes one frame in `framePixelFormat` with its timestamp in the input's time base.
    func encode(_ frame: MediaFrame) throws {
        // Some encoders take the colour tags from the frame, not the stream (PNG's cHRM and
        // gAMA, ProRes's frame header, which lost them all), as ffmpeg's frames carry them. Set
        // before the repacking too, which must convert with the output's range: a limited-range
        // grey frame repacked as full range was dithered (9-bit grey lost a code at every other pixel).
        frame.pointer.pointee.color_primaries = encoder!.pointee.color_primaries
        frame.pointer.pointee.color_trc = encoder!.pointee.color_trc
        frame.pointer.pointee.colorspace = encoder!.pointee.colorspace
        frame.pointer.pointee.color_range = encoder!.pointee.color_range
        frame.pointer.pointee.chroma_location = encoder!.pointee.chroma_sample_location
        let source = try repacker?.repack(frame, to: encoder!.pointee.pix_fmt) ?? frame
        if let iccProfile { source.attach(iccProfile: iccProfile) }
        // A decoded frame remembers its old picture type; x264 would obey it. Let the encoder choose.
        source.pointer.pointee.pict_type = AV_PICTURE_TYPE_NONE
        // Coding fields, a progressive frame (one joined after interlaced ones) is coded in the
        // stream's field order: given as bottom first, it made x264 code every frame so (its
        // look-ahead takes the last order given), the interlaced ones before it too.
        if codesFields, source.pointer.pointee.interlaced_frame == 0 {
            source.pointer.pointee.interlaced_frame = 1
            source.pointer.pointee.top_field_first = [AV_FIELD_TT, AV_FIELD_TB].contains(encoder!.pointee.field_order) ? 1 : 0
        }
        let pts = source.pointer.pointee.pts
        defer { source.pointer.pointee.pts = pts } // the caller's frame keeps its own timestamp
        let none = velvet_av_nopts_value()
        let shifted = pts == none ? nil : pts + av_rescale_q(startShift, AVRational(num: 1, den: AV_TIME_BASE), frameTimeBase)
        if slots != nil {
            guard let (first, previous, copies) = slots!.place(shifted, in: frameTimeBase) else { return }
            for tick in first..<first + previous {
                let repeated = lastSent ?? source.pointer // the first frame fills the ticks before it
                repeated.pointee.pts = tick
                try send(repeated)
            }
            for tick in first + previous..<first + previous + copies {
                source.pointer.pointee.pts = tick
                try send(source.pointer)
            }
            av_frame_free(&lastSent)
            lastSent = av_frame_clone(source.pointer)
            return
        }
        if numbersFrames {
            source.pointer.pointee.pts = Int64(framesWritten)
        } else if let shifted, clock != nil {
            guard let placed = clock!.place(shifted, in: frameTimeBase) else { return }
            source.pointer.pointee.pts = placed
        } else if let shifted {
            source.pointer.pointee.pts = av_rescale_q(shifted, frameTimeBase, encoder!.pointee.time_base)
        }
        try send(source.pointer)
    }

    private func send(_ frame: UnsafeMutablePointer<AVFrame>) throws {
        let sent = avcodec_send_frame(encoder, frame)
        guard sent >= 0 else { throw MediaError.encode(ffmpegMessage(sent)) }
        framesWritten += 1
        try drainEncoder()
    }

    /// Writes a packet of a copied stream (timestamps in the input stream's time base).
    func writeCopied(_ copied: MediaPacket, inputStreamIndex: Int) throws {
        timelines[inputStreamIndex, default: PacketTimeline()].place(copied.pointer)
        if startShift != 0, let timeBase = inputTimeBases[inputStreamIndex] {
            let shift = av_rescale_q(startShift, AVRational(num: 1, den: AV_TIME_BASE), timeBase), none = velvet_av_nopts_value()
            if copied.pointer.pointee.pts != none { copied.pointer.pointee.pts += shift }
            if copied.pointer.pointee.dts != none { copied.pointer.pointee.dts += shift }
        }
        if let transcoder = transcodedStreams[inputStreamIndex] {
            try transcoder.transcode(copied, write: writeInterleaved)
            return
        }
        if let converter = convertedSubtitles[inputStreamIndex] {
            try converter.convert(copied, write: writeInterleaved)
            return
        }
        guard let target = copiedStreams[inputStreamIndex] else { return }
        av_packet_rescale_ts(copied.pointer, target.inputTimeBase, target.output.pointee.time_base)
        copied.pointer.pointee.stream_index = target.output.pointee.index
        copied.pointer.pointee.pos = -1
        let written = av_interleaved_write_frame(formatContext, copied.pointer)
        guard written >= 0 else { throw failure(written) }
    }

    /// Flushes the encoder, writes the trailer and moves the file to its final path.
    func finish() throws {
        let sent = avcodec_send_frame(encoder, nil)
        guard sent >= 0 || sent == velvet_averror_eof() else { throw MediaError.encode(ffmpegMessage(sent)) }
        try drainEncoder()
        for transcoder in transcodedStreams.values { try transcoder.finish(write: writeInterleaved) }
        let trailer = av_write_trailer(formatContext)
        guard trailer >= 0 else { throw failure(trailer) }
        if !writesPictures {
            let closed = avio_closep(&formatContext.pointee.pb)
            guard closed >= 0 else { throw failure(closed) }
        }
        endStandardOutput()
        if let file, let handOver { handOver(file) } else { try file?.commit() }
        try prepareCommit?() // before the lock, as `OutputFile.commit` runs it (compare's report is GPU work)
        if let sequence {
            try UnfinishedFiles.shared.exclusively {
                try beforeCommit?(sequence.pattern)
                try sequence.commit()
            }
        } else {
            try beforeCommit?(path)
        }
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
        guard written >= 0 else { throw failure(written) }
    }

    /// A failed write; on standard output a broken pipe says who ended it (SIGPIPE is ignored,
    /// so the write fails with EPIPE instead of killing the process).
    private func failure(_ code: Int32) -> MediaError {
        if file == nil, sequence == nil, code == -EPIPE { return .output(path: path, reason: "the pipe was closed by the program reading it") }
        return .output(path: path, reason: ffmpegMessage(code))
    }

    private func drainEncoder() throws {
        while true {
            let received = avcodec_receive_packet(encoder, packet.pointer)
            if received == velvet_averror_eagain() || received == velvet_averror_eof() { return }
            guard received >= 0 else { throw MediaError.encode(ffmpegMessage(received)) }
            av_packet_rescale_ts(packet.pointer, encoder!.pointee.time_base, videoStream.pointee.time_base)
            packet.pointer.pointee.stream_index = videoStream.pointee.index
            // The image2 muxer creates a picture's file as it writes the packet.
            let written: Int32
            if writesPictures {
                let picture = try sequence?.next() ?? file!
                setPictureFile(picture.temporaryPath)
                written = try picture.creating { _ in av_interleaved_write_frame(formatContext, packet.pointer) }
            } else {
                written = av_interleaved_write_frame(formatContext, packet.pointer)
            }
            guard written >= 0 else { throw failure(written) }
        }
    }

    private func closeAndRemove() {
        if !writesPictures, formatContext.pointee.pb != nil { avio_closep(&formatContext.pointee.pb) }
        endStandardOutput()
        // SVT-AV1 complains on stderr when closed mid-stream: end it, dropping its packets.
        if framesWritten > 0, let encoder, EncoderTuning.hangWithoutFrames.contains(String(cString: encoder.pointee.codec.pointee.name)),
           avcodec_send_frame(encoder, nil) >= 0 {
            while avcodec_receive_packet(encoder, packet.pointer) >= 0 { av_packet_unref(packet.pointer) }
        }
        releaseContexts()
        file?.discard()
        sequence?.discard()
    }

    private func endStandardOutput() {
        if sendsToStandardOutput { UnfinishedFiles.shared.streamEnded(OutputContainer.standardOutput) }
        sendsToStandardOutput = false
    }

    /// The file the image2 muxer writes the next picture to.
    private func setPictureFile(_ path: String) {
        av_free(formatContext.pointee.url)
        formatContext.pointee.url = av_strdup(path)
    }

    private var released = false
    private func releaseContexts() {
        guard !released else { return }
        released = true
        av_frame_free(&lastSent)
        transcodedStreams.removeAll()
        convertedSubtitles.removeAll()
        avcodec_free_context(&encoder)
        avformat_free_context(formatContext)
    }

    /// AVI's rate, at most 1000 frames a second: FFmpeg's AVI muxer refuses more ("Invalid
    /// argument" at its header); faster input drops frames to it (`FrameSlots`, with a warning).
    static func aviRate(_ rate: AVRational) -> AVRational {
        rate.num > 0 && rate.den > 0 && av_q2d(rate) > 1000 ? AVRational(num: 1000, den: 1) : rate
    }

    /// The encoder's format: the requested one, else the source's if the encoder takes it,
    /// else yuv420p (yuv420p10le for deep sources) for video where the encoder takes it, else
    /// the one FFmpeg ranks least lossy (ProRes: yuv422p10le from 4:2:0, yuv444p10le from
    /// 4:4:4; rgb48be for 16-bit sources in PNG). An encoder that lists no formats (y4m's wrapped_avframe)
    /// takes the planar ones the GPU writes (what y4m holds).
    static func encoderPixelFormat(codec: UnsafePointer<AVCodec>, source: AVPixelFormat, requested: String?,
                                   still: Bool) throws -> AVPixelFormat {
        var supported: [AVPixelFormat] = []
        if var cursor = codec.pointee.pix_fmts {
            while cursor.pointee != AV_PIX_FMT_NONE { supported.append(cursor.pointee); cursor += 1 }
        } else {
            supported = VideoPlaneLayout.readableFormats.filter { [.planar, .gray].contains(VideoPlaneLayout($0)?.kind) }
        }
        if let requested {
            let format = av_get_pix_fmt(requested)
            guard format != AV_PIX_FMT_NONE, supported.contains(format) else {
                throw MediaError.unsupported("pixel format '\(requested)' for \(String(cString: codec.pointee.name)); it takes "
                                             + supported.map { String(cString: av_get_pix_fmt_name($0)) }.joined(separator: ", "))
            }
            // The GPU writes it, or swscale repacks into it: else it would fail at the first frame.
            guard VideoPlaneLayout(format) != nil || sws_isSupportedOutput(format) != 0 else {
                throw MediaError.unsupported("pixel format '\(requested)': Velvet cannot write it (no converter into it"
                                             + (format == AV_PIX_FMT_PAL8 ? "; ffmpeg's palettegen and paletteuse filters make paletted pictures)" : ")"))
            }
            return format
        }
        // Unless asked for by name, only formats swscale can write (not pal8, whose palette it
        // cannot choose): the GPU's output is repacked into the encoder's format.
        supported = supported.filter { sws_isSupportedOutput($0) != 0 }
        // A YUV source's alpha is not read (`VideoPlaneLayout.dropsAlpha`): its format would
        // promise an alpha plane that holds only opaque values.
        let dropsAlpha = VideoPlaneLayout.dropsAlpha(source)
        if supported.contains(source) && !dropsAlpha { return source }
        let hasAlpha: Int32 = VideoPlaneLayout.hasAlpha(source) && !dropsAlpha ? 1 : 0
        func leastLossy(_ list: [AVPixelFormat]) -> AVPixelFormat? {
            let best = (list + [AV_PIX_FMT_NONE]).withUnsafeBufferPointer {
                avcodec_find_best_pix_fmt_of_list($0.baseAddress, source, still ? hasAlpha : 0, nil)
            }
            return best == AV_PIX_FMT_NONE ? nil : best
        }
        if still, let best = leastLossy(supported) { return best }
        let deep = (av_pix_fmt_desc_get(source)?.pointee.comp.0.depth ?? 8) > 8
        let candidates: [AVPixelFormat] = deep ? [AV_PIX_FMT_YUV420P10LE, AV_PIX_FMT_YUV420P] : [AV_PIX_FMT_YUV420P]
        // Video outputs hold no alpha: an encoder's alpha formats are chosen only by name.
        let opaque = supported.filter { (av_pix_fmt_desc_get($0)?.pointee.flags ?? 0) & UInt64(AV_PIX_FMT_FLAG_ALPHA) == 0 }
        guard let format = candidates.first(where: supported.contains) ?? leastLossy(opaque) ?? supported.first else {
            throw MediaError.unsupported("\(String(cString: codec.pointee.name)) takes no pixel format we produce")
        }
        return format
    }

    /// A stream of `context` taking `source`'s packets untouched.
    private static func addCopy(of source: UnsafeMutablePointer<AVStream>, to context: UnsafeMutablePointer<AVFormatContext>,
                                _ path: String) throws -> UnsafeMutablePointer<AVStream> {
        guard let copy = avformat_new_stream(context, nil) else { throw MediaError.encode("out of memory") }
        try check(avcodec_parameters_copy(copy.pointee.codecpar, source.pointee.codecpar), path)
        copy.pointee.codecpar.pointee.codec_tag = 0
        copy.pointee.time_base = source.pointee.time_base
        av_dict_copy(&copy.pointee.metadata, source.pointee.metadata, 0)
        copy.pointee.disposition = source.pointee.disposition
        return copy
    }

    private static func check(_ code: Int32, _ path: String) throws {
        if code < 0 { throw MediaError.output(path: path, reason: ffmpegMessage(code)) }
    }
}
