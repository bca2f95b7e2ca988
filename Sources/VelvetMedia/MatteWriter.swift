import CFFmpeg
import Foundation
import VelvetFiles

/// Writes one grey picture per rendered frame, in step with the render (`render --matte`):
/// FFV1 gray16le in a container that holds FFV1 (.mkv, .nut, .avi) for a video, with each
/// frame's timestamp in the input's time base (the main output's), or one 16-bit grey PNG
/// for a still. Like `MediaWriter`, everything goes to a temporary file beside the path
/// (`OutputFile`) that only `finish()` moves into place.
public final class MatteWriter: @unchecked Sendable {
    public let path: String
    public let width: Int
    public let height: Int
    public let isStillImage: Bool
    public private(set) var framesWritten = 0
    private let file: OutputFile
    private let formatContext: UnsafeMutablePointer<AVFormatContext>
    private var encoder: UnsafeMutablePointer<AVCodecContext>?
    private let stream: UnsafeMutablePointer<AVStream>
    private let timeBase: AVRational
    /// Added to every frame's timestamp, in `timeBase`: the main output's shift, so the matte
    /// starts where the render does (`MediaReader.outputStartShift`).
    private let startShift: Int64
    /// Keeps the frames' timestamps apart on the muxer's clock (a video's).
    private var clock: OutputClock?
    private let packet: MediaPacket
    private var finished = false

    /// Why `matte` cannot be the matte of a render into `output` (a still's matte is a .png,
    /// a video's a video that holds FFV1); nil when it can. Asked before any work.
    public static func problem(matte: String, output: String, option: String = "--matte") -> String? {
        let outputIsStill = (try? OutputContainer(path: output))?.isStillImage ?? false
        guard let container = try? OutputContainer(path: matte) else {
            return "\(option): unknown format '\(URL(fileURLWithPath: matte).pathExtension)' (use .mkv for a video, .png for a still)"
        }
        if outputIsStill {
            let codec = av_guess_codec(container.format, nil, matte, nil, AVMEDIA_TYPE_VIDEO)
            guard container.isStillImage, codec == AV_CODEC_ID_PNG else {
                return "\(option): the output is one picture, so its matte is one too: use a .png (16-bit grey)"
            }
        } else {
            if container.isStillImage {
                return "\(option): the output is a video and a \(container.fileExtension) holds one picture: use .mkv (FFV1, 16-bit grey)"
            }
            guard container.holds(encoded: AV_CODEC_ID_FFV1, type: AVMEDIA_TYPE_VIDEO) else {
                return "\(option): the \(container.name) format cannot hold FFV1 video: use .mkv"
            }
        }
        return nil
    }

    /// - Parameter input: the render's input, whose video time base and frame rate the matte takes.
    public init(path: String, input: String, width: Int, height: Int, commit: CommitPolicy = .replace) throws {
        self.path = path
        self.width = width
        self.height = height
        file = try OutputFile(path: path, policy: commit)
        if SameFile.check(path, input) { throw MediaError.output(path: path, reason: "the matte would overwrite the input") }
        let container = try OutputContainer(path: path)
        isStillImage = container.isStillImage
        packet = try MediaPacket()
        let reader = try MediaReader(path: input)
        let inputStream = reader.videoStream
        let rate = av_guess_frame_rate(reader.formatContext, inputStream, nil)
        timeBase = inputStream.pointee.time_base.num > 0 ? inputStream.pointee.time_base : AVRational(num: 1, den: 25)
        startShift = av_rescale_q(reader.outputStartShift, AVRational(num: 1, den: AV_TIME_BASE), timeBase)

        var allocated: UnsafeMutablePointer<AVFormatContext>? = nil
        guard avformat_alloc_output_context2(&allocated, container.format, nil, path) >= 0, let context = allocated else {
            throw OutputContainer.unknownFormat(path)
        }
        formatContext = context
        guard let codec = avcodec_find_encoder(isStillImage ? AV_CODEC_ID_PNG : AV_CODEC_ID_FFV1),
              let encoder = avcodec_alloc_context3(codec), let stream = avformat_new_stream(context, nil) else {
            avformat_free_context(context)
            throw MediaError.encode("no \(isStillImage ? "PNG" : "FFV1") encoder")
        }
        self.encoder = encoder
        self.stream = stream
        // Every stored property has a value from here on: a throw below runs deinit, which cleans up.
        encoder.pointee.width = Int32(width)
        encoder.pointee.height = Int32(height)
        encoder.pointee.pix_fmt = isStillImage ? AV_PIX_FMT_GRAY16BE : AV_PIX_FMT_GRAY16LE
        encoder.pointee.time_base = timeBase
        if rate.num > 0 { encoder.pointee.framerate = rate }
        encoder.pointee.color_range = AVCOL_RANGE_JPEG
        if context.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 {
            encoder.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        }
        if !isStillImage { encoder.pointee.level = 3 } // FFV1 version 3: per-slice CRCs, the archival one
        try Self.check(avcodec_open2(encoder, codec, nil), path)
        try Self.check(avcodec_parameters_from_context(stream.pointee.codecpar, encoder), path)
        stream.pointee.time_base = timeBase
        stream.pointee.avg_frame_rate = encoder.pointee.framerate
        if isStillImage {
            // The image2 muxer opens its file itself, when the packet is written.
            av_opt_set(context.pointee.priv_data, "update", "1", 0)
            av_free(context.pointee.url)
            context.pointee.url = av_strdup(file.temporaryPath)
        } else {
            let opened = try file.creating { avio_open(&context.pointee.pb, $0, AVIO_FLAG_WRITE) }
            try Self.check(opened, path)
        }
        try Self.check(avformat_write_header(context, nil), path)
        if !isStillImage { clock = OutputClock(encoder: timeBase, muxer: stream.pointee.time_base) }
    }

    /// What the matte's clock could not hold, one line (nil when every frame was written).
    public var warning: String? { clock?.warning(output: path) }

    deinit { if !finished { abort() } }

    /// Encodes one frame: `values` row by row (0 ... 65535 for weight 0 ... 1), at `time`
    /// seconds (a time the input's time base holds exactly: the renderer's frame times).
    public func write(_ values: [UInt16], time: Double) throws {
        precondition(values.count == width * height, "a matte frame is width x height values")
        guard let frame = av_frame_alloc() else { throw MediaError.encode("out of memory") }
        var owned: UnsafeMutablePointer<AVFrame>? = frame
        defer { av_frame_free(&owned) }
        frame.pointee.width = Int32(width)
        frame.pointee.height = Int32(height)
        frame.pointee.format = encoder!.pointee.pix_fmt.rawValue
        frame.pointee.color_range = AVCOL_RANGE_JPEG
        try Self.check(av_frame_get_buffer(frame, 0), path)
        let pitch = Int(velvet_frame_linesize(frame, 0))
        let base = velvet_frame_data(frame, 0)!
        values.withUnsafeBufferPointer { source in
            for y in 0..<height {
                let row = UnsafeMutableRawPointer(base + y * pitch).bindMemory(to: UInt16.self, capacity: width)
                for x in 0..<width {
                    let value = source[y * width + x]
                    row[x] = isStillImage ? value.bigEndian : value.littleEndian
                }
            }
        }
        frame.pointee.pts = 0
        if clock != nil {
            guard let placed = clock!.place(Int64((time / av_q2d(timeBase)).rounded()) + startShift, in: timeBase) else { return }
            frame.pointee.pts = placed
        }
        let sent = avcodec_send_frame(encoder, frame)
        guard sent >= 0 else { throw MediaError.encode(ffmpegMessage(sent)) }
        framesWritten += 1
        try drain()
    }

    /// Flushes the encoder, writes the trailer and moves the file to its path.
    public func finish() throws {
        guard !finished else { return }
        let sent = avcodec_send_frame(encoder, nil)
        guard sent >= 0 || sent == velvet_averror_eof() else { throw MediaError.encode(ffmpegMessage(sent)) }
        try drain()
        try Self.check(av_write_trailer(formatContext), path)
        if !isStillImage { try Self.check(avio_closep(&formatContext.pointee.pb), path) }
        try file.commit()
        finished = true
        release()
    }

    /// Drops everything written so far.
    public func abort() {
        guard !finished else { return }
        finished = true
        if !isStillImage, formatContext.pointee.pb != nil { avio_closep(&formatContext.pointee.pb) }
        release()
        file.discard()
    }

    private func drain() throws {
        while true {
            let received = avcodec_receive_packet(encoder, packet.pointer)
            if received == velvet_averror_eagain() || received == velvet_averror_eof() { return }
            guard received >= 0 else { throw MediaError.encode(ffmpegMessage(received)) }
            av_packet_rescale_ts(packet.pointer, timeBase, stream.pointee.time_base)
            packet.pointer.pointee.stream_index = stream.pointee.index
            let written = isStillImage ? try file.creating { _ in av_interleaved_write_frame(formatContext, packet.pointer) }
                                       : av_interleaved_write_frame(formatContext, packet.pointer)
            try Self.check(written, path)
        }
    }

    private var released = false
    private func release() {
        guard !released else { return }
        released = true
        avcodec_free_context(&encoder)
        avformat_free_context(formatContext)
    }

    private static func check(_ code: Int32, _ path: String) throws {
        if code < 0 { throw MediaError.output(path: path, reason: ffmpegMessage(code)) }
    }
}
