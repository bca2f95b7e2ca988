import CFFmpeg
import Foundation

/// What the reader found in the input.
public struct MediaInfo: Sendable {
    public var path: String
    public var width: Int
    public var height: Int
    /// Frames the container announces (0 when unknown).
    public var announcedFrameCount: Int
    /// The frame count or duration the container declares, when it declares one.
    var declaredLength: DeclaredLength?
    public var frameRate: Double
    public var orientation: Orientation
    public var isStillImage: Bool
    public var audioStreamCount: Int
    public var uprightSize: (width: Int, height: Int) { orientation.uprightSize(width: width, height: height) }
}

/// Demuxes and decodes one input with libavformat/libavcodec: the best video stream is
/// decoded; audio and subtitle streams are passed on as packets (the writer copies or
/// converts them). Stills (PNG, JPEG, ...) are one-frame inputs through the same path.
final class MediaReader: @unchecked Sendable {
    enum Item {
        case video(MediaFrame)
        case packet(MediaPacket, streamIndex: Int)
    }

    /// Largest accepted side, in pixels.
    static let maxDimension = 16384

    let info: MediaInfo
    let formatContext: UnsafeMutablePointer<AVFormatContext>
    let videoStreamIndex: Int
    /// Video streams besides the rendered one (a second camera angle), not cover art: left out.
    let otherVideoStreamIndices: [Int]
    let copiedStreamIndices: [Int]
    /// Matroska's attached files (the fonts of ASS subtitles): streams without packets.
    let attachmentStreamIndices: [Int]
    private var codecContext: UnsafeMutablePointer<AVCodecContext>?
    private let packet: MediaPacket
    private var pendingFrames: [MediaFrame] = []
    private var demuxerFinished = false
    private var decoderFinished = false
    private(set) var framesDecoded = 0
    private var firstPixelFormat: AVPixelFormat?
    private var firstLook: FrameLook?
    private var readError: String?
    /// Frames decoded when the first read or decode error came: frames decoded after it mean
    /// the damage is in the middle, not where the stream ends.
    private var framesBeforeDamage: Int?
    /// A JPEG picture (a still or a sequence's): its end is checked (`JPEGEnd`).
    private var checksJPEGEnd = false
    /// For a format whose clock may jump (MPEG-TS, MPEG-PS): the jumps closed.
    private var clockJumps: ClockJumps?
    /// The files of an image sequence input (nil for any other input).
    private var sequencePictures: Int?
    /// The pictures of a sequence read so far.
    private var sequencePicturesRead = 0
    private var timestamps: TimestampSynthesizer
    /// Keep what decodes of a damaged or truncated input (a warning instead of an error).
    var keepsTruncated = false
    /// What was wrong with an input kept under `keepsTruncated`, one line each.
    private(set) var warnings: [String] = []

    /// Standard input, or a path that is a pipe (/dev/stdin, a FIFO): read without seeking.
    static func isPipe(_ path: String) -> Bool {
        var info = stat()
        return path == standardInput || (stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
    }

    /// The path that means standard input, as in ffmpeg: read as a pipe (no seeking), in any
    /// format FFmpeg can demux from one (Matroska, NUT, y4m, MPEG-TS, ...).
    static let standardInput = "-"
    var isStandardInput: Bool { info.path == Self.standardInput }

    init(path: String) throws {
        var isDirectory: ObjCBool = false
        let isPipe = path == Self.standardInput
        let isSequence = !isPipe && ImageSequence.isPattern(path)
        if isSequence {
            guard ImageSequence.isUsable(path) else { throw MediaError.cannotOpen(path: path, reason: ImageSequence.unusablePattern) }
            sequencePictures = ImageSequence.files(path).count
            guard sequencePictures != 0 else {
                throw MediaError.cannotOpen(path: path, reason: "no such file (an image sequence: no frame numbered \(ImageSequence.firstNumbers.lowerBound) to \(ImageSequence.firstNumbers.upperBound))")
            }
        } else if !isPipe && !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            throw MediaError.cannotOpen(path: path, reason: "no such file")
        }
        guard !isDirectory.boolValue else { throw MediaError.cannotOpen(path: path, reason: "is a directory") }
        av_log_set_level(AV_LOG_QUIET)

        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        // A sequence goes to image2 by name; a file whose own name holds a pattern is that file.
        var options: OpaquePointer? = nil
        if !isPipe, !isSequence, av_filename_number_test(path) != 0 { av_dict_set(&options, "pattern_type", "none", 0) }
        if isSequence, let rate = ImageSequence.frameRate { av_dict_set(&options, "framerate", rate, 0) }
        defer { av_dict_free(&options) }
        let opened = avformat_open_input(&context, isPipe ? "pipe:0" : path, isSequence ? av_find_input_format("image2") : nil, &options)
        guard opened >= 0, let context else {
            throw MediaError.cannotOpen(path: path, reason: Self.describe(opened))
        }
        formatContext = context
        do {
            packet = try MediaPacket()
            let found = avformat_find_stream_info(context, nil)
            guard found >= 0 else { throw MediaError.cannotOpen(path: path, reason: Self.describe(found)) }
            let streams = (0..<Int(context.pointee.nb_streams)).map { context.pointee.streams[$0]! }
            // Cover art (an MP3's or M4A's attached picture) is a "video" stream of one picture,
            // not the video: FFmpeg ranks it lower, but takes it when there is nothing else.
            func isVideo(_ index: Int) -> Bool {
                streams[index].pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO
                    && streams[index].pointee.disposition & AV_DISPOSITION_ATTACHED_PIC == 0
            }
            let best = Int(av_find_best_stream(context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0))
            guard let chosen = best >= 0 && isVideo(best) ? best : streams.indices.first(where: isVideo) else {
                throw MediaError.noVideoStream(path: path)
            }
            videoStreamIndex = chosen
            otherVideoStreamIndices = streams.indices.filter { $0 != chosen && isVideo($0) }
            copiedStreamIndices = streams.indices.filter {
                let parameters = streams[$0].pointee.codecpar.pointee
                // An audio stream the probe found no audio in (a TS's declared PID with no packets:
                // 0 channels, 0 Hz) has nothing to carry and could be neither copied nor re-encoded.
                if parameters.codec_type == AVMEDIA_TYPE_AUDIO { return parameters.ch_layout.nb_channels > 0 && parameters.sample_rate > 0 }
                return parameters.codec_type == AVMEDIA_TYPE_SUBTITLE
            }
            attachmentStreamIndices = streams.indices.filter { streams[$0].pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_ATTACHMENT }

            let stream = streams[videoStreamIndex]
            let parameters = stream.pointee.codecpar!
            let width = Int(parameters.pointee.width), height = Int(parameters.pointee.height)
            let formatName = String(cString: context.pointee.iformat.pointee.name)
            let isStill = !isSequence && (formatName.hasSuffix("_pipe") || formatName == "image2")
            if parameters.pointee.codec_id == AV_CODEC_ID_WEBP, Self.isAnimatedWebP(path) {
                throw MediaError.unsupported("\(path) is an animated WebP, which FFmpeg 5.1 cannot decode (still WebP pictures it can)")
            }
            // No size at all: the demuxer could not even read the picture's header, or the
            // picture is past what FFmpeg decodes (its pixel count, with padding, under 2^28).
            guard width > 0, height > 0 else {
                // FFmpeg reads some pictures (TIFF, OpenEXR, SGI, PCX, XWD, Sun raster) only
                // from a file it can seek in; from a pipe it finds no size, intact or not.
                if isStill, Self.isPipe(path) {
                    throw MediaError.decode(path: path, reason: "FFmpeg cannot read a \(formatName.replacingOccurrences(of: "_pipe", with: "")) "
                                            + "picture from a pipe: pass the file by name")
                }
                throw MediaError.decode(path: path, reason: isStill ? "truncated or damaged image (or one past FFmpeg's limit of about 268 million pixels)"
                                        : "truncated or damaged video stream")
            }
            guard (1...Self.maxDimension).contains(width), (1...Self.maxDimension).contains(height) else {
                throw MediaError.invalidDimensions(width: width, height: height, limit: Self.maxDimension)
            }
            guard let decoder = Self.decoder(for: stream) else {
                throw MediaError.unsupported("no decoder for \(String(cString: avcodec_get_name(parameters.pointee.codec_id)))")
            }
            guard let decoderContext = avcodec_alloc_context3(decoder) else { throw MediaError.unsupported("out of memory") }
            codecContext = decoderContext
            try Self.check(avcodec_parameters_to_context(decoderContext, parameters), path)
            decoderContext.pointee.thread_count = 0
            decoderContext.pointee.pkt_timebase = stream.pointee.time_base
            try Self.check(avcodec_open2(decoderContext, decoder, nil), path)

            checksJPEGEnd = (isStill || isSequence) && parameters.pointee.codec_id == AV_CODEC_ID_MJPEG
            if context.pointee.iformat.pointee.flags & AVFMT_TS_DISCONT != 0 { clockJumps = ClockJumps() }
            let rate = av_guess_frame_rate(context, stream, nil)
            let frameRate = rate.den > 0 ? Double(rate.num) / Double(rate.den) : 0
            timestamps = TimestampSynthesizer(frameRate: rate, timeBase: stream.pointee.time_base)
            info = MediaInfo(
                path: path, width: width, height: height,
                announcedFrameCount: sequencePictures ?? Int(stream.pointee.nb_frames),
                // A sequence's length is its files' count (image2's may reach past a gap).
                declaredLength: isStill ? nil : sequencePictures.map { DeclaredLength(pictures: $0, frameRate: frameRate) }
                    ?? DeclaredLength(stream: stream, context: context, frameRate: frameRate),
                frameRate: frameRate,
                orientation: Orientation(stream: stream),
                isStillImage: isStill,
                audioStreamCount: streams.filter { $0.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO }.count)
        } catch {
            var context: UnsafeMutablePointer<AVFormatContext>? = context
            avformat_close_input(&context)
            avcodec_free_context(&codecContext)
            throw error
        }
    }

    deinit {
        avcodec_free_context(&codecContext)
        var context: UnsafeMutablePointer<AVFormatContext>? = formatContext
        avformat_close_input(&context)
    }

    var videoStream: UnsafeMutablePointer<AVStream> { formatContext.pointee.streams[videoStreamIndex]! }

    /// FFmpeg's decoder for the stream; for VP8/VP9 that WebM marks as carrying alpha
    /// (`alpha_mode` 1), libvpx's, which decodes the alpha (FFmpeg's own drops it: a
    /// `--matte-in` of VP9 with alpha was read by its luma).
    private static func decoder(for stream: UnsafeMutablePointer<AVStream>) -> UnsafePointer<AVCodec>? {
        let id = stream.pointee.codecpar.pointee.codec_id
        if id == AV_CODEC_ID_VP9 || id == AV_CODEC_ID_VP8,
           let mode = av_dict_get(stream.pointee.metadata, "alpha_mode", nil, 0), String(cString: mode.pointee.value) == "1",
           let libvpx = avcodec_find_decoder_by_name(id == AV_CODEC_ID_VP9 ? "libvpx-vp9" : "libvpx") {
            return libvpx
        }
        return avcodec_find_decoder(id)
    }

    /// Why an MP4/MOV from a pipe may decode nothing: its index (moov) comes after the data,
    /// which a pipe cannot seek back to (ffmpeg fails alike).
    private var pipeHint: String {
        guard isStandardInput, String(cString: formatContext.pointee.iformat.pointee.name).hasPrefix("mov,") else { return "" }
        return " (an MP4/MOV read from a pipe needs its index first: give its path, or remux it with ffmpeg -movflags faststart)"
    }

    /// The next decoded video frame or copied packet, in demux order; nil at the end.
    /// Throws `.truncated` when the input ends in damage or short of what its container
    /// declares (unless `keepsTruncated`: then a warning is kept instead).
    func next() throws -> Item? {
        while true {
            if !pendingFrames.isEmpty { return .video(pendingFrames.removeFirst()) }
            if decoderFinished {
                if framesDecoded == 0 {
                    // A picture that yields nothing (a PNG cut short after its header) is damaged.
                    let nothing = info.isStillImage ? "truncated or damaged image" : "no frame could be decoded"
                    throw MediaError.decode(path: info.path, reason: (readError ?? nothing) + pipeHint)
                }
                if let pictures = sequencePictures, framesDecoded < pictures {
                    // Each picture is a frame of its own: the damage is not where the frames end.
                    // A picture cut short or of another format may yield no frame and no error
                    // (the PNG decoder's threads drop it): the count alone tells.
                    let damage = endDamage() ?? "no error from the decoder: they yield no picture"
                    let what = "\(pictures - framesDecoded) of its \(pictures) pictures do not decode (\(damage))"
                    guard keepsTruncated else {
                        throw MediaError.decode(path: info.path, reason: what + "; nothing was written (--allow-truncated keeps the others)")
                    }
                    if warnings.isEmpty { warnings.append("\(info.path): \(what); kept the \(framesDecoded) that do") }
                } else if let damage = endDamage() {
                    let error = MediaError.truncated(path: info.path, framesDecoded: framesBeforeDamage ?? framesDecoded, reason: damage)
                    guard keepsTruncated else { throw error }
                    if warnings.isEmpty { warnings.append(error.keptDescription) }
                }
                return nil
            }
            if demuxerFinished {
                try receiveFrames(flushing: true)
                continue
            }
            // image2 finds a sequence's last number by probing in doubling steps, which can
            // step over a gap (of 1, 2, 3 and 5 it reads to 5 and fails at 4): the sequence
            // ends at its first gap, as `ImageSequence.files` has it.
            if let pictures = sequencePictures, sequencePicturesRead >= pictures {
                demuxerFinished = true
                avcodec_send_packet(codecContext, nil)
                continue
            }
            let result = av_read_frame(formatContext, packet.pointer)
            if result < 0 {
                if result != velvet_averror_eof() { noteDamage(Self.describe(result)) }
                demuxerFinished = true
                avcodec_send_packet(codecContext, nil)
                continue
            }
            let streamIndex = Int(packet.pointer.pointee.stream_index)
            // Sparse streams (subtitles, data) may be silent for long: only audio and video tell a jump.
            if clockJumps != nil, let stream = formatContext.pointee.streams[streamIndex] {
                let type = stream.pointee.codecpar.pointee.codec_type
                clockJumps!.place(packet.pointer, timeBase: stream.pointee.time_base,
                                  tells: type == AVMEDIA_TYPE_VIDEO || type == AVMEDIA_TYPE_AUDIO)
            }
            if streamIndex == videoStreamIndex {
                sequencePicturesRead += 1
                if checksJPEGEnd, let data = packet.pointer.pointee.data,
                   !JPEGEnd.isReached(UnsafeRawBufferPointer(start: data, count: Int(packet.pointer.pointee.size))) {
                    let reason = "its JPEG data ends before the end-of-image marker"
                    // A sequence's picture is left out, as one that does not decode (counted at the end).
                    if sequencePictures != nil {
                        readError = readError ?? "a picture's JPEG data ends before its end-of-image marker"
                        av_packet_unref(packet.pointer)
                        continue
                    }
                    // A still's, said at once: a still output stops after its first frame, before the end's checks.
                    let error = MediaError.truncated(path: info.path, framesDecoded: framesDecoded, reason: reason)
                    guard keepsTruncated else {
                        av_packet_unref(packet.pointer)
                        throw error
                    }
                    if warnings.isEmpty { warnings.append("\(info.path): \(reason); kept what decodes") }
                }
                let sent = avcodec_send_packet(codecContext, packet.pointer)
                av_packet_unref(packet.pointer)
                if sent < 0 && sent != velvet_averror_eagain() {
                    noteDamage(Self.describe(sent))
                }
                try receiveFrames(flushing: false)
            } else if copiedStreamIndices.contains(streamIndex) {
                let copy = try MediaPacket()
                av_packet_move_ref(copy.pointer, packet.pointer)
                return .packet(copy, streamIndex: streamIndex)
            } else {
                av_packet_unref(packet.pointer)
            }
        }
    }

    private func receiveFrames(flushing: Bool) throws {
        while true {
            let frame = try MediaFrame()
            let result = avcodec_receive_frame(codecContext, frame.pointer)
            if result == velvet_averror_eagain() { return }
            if result == velvet_averror_eof() {
                decoderFinished = true
                return
            }
            if result < 0 {
                noteDamage(Self.describe(result))
                if flushing { decoderFinished = true }
                return
            }
            guard frame.width == info.width, frame.height == info.height else {
                // The header's size is the stream's; a first frame unlike it comes before frames like it.
                let sizes = ["\(info.width)x\(info.height)", "\(frame.width)x\(frame.height)"]
                let (from, to) = firstPixelFormat == nil ? (sizes[1], sizes[0]) : (sizes[0], sizes[1])
                throw MediaError.unsupported("the frame size changes mid-stream (\(from) -> \(to))")
            }
            // The render's plan (plane layout, conversions, encoder format) is the first frame's.
            if let first = firstPixelFormat, frame.pixelFormat != first {
                throw MediaError.unsupported("the pixel format changes mid-stream (\(MediaFrame.name(of: first)) -> "
                                             + "\(MediaFrame.name(of: frame.pixelFormat)))")
            }
            firstPixelFormat = frame.pixelFormat
            let look = FrameLook(frame)
            if let first = firstLook, let change = first.change(to: look) { throw MediaError.unsupported(change) }
            firstLook = firstLook ?? look
            framesDecoded += 1
            timestamps.stamp(frame)
            pendingFrames.append(frame)
        }
    }

    /// Why the stream's end is not a clean one: a read or decode error, or fewer frames than
    /// the container declares (a file cut short with its index intact ends like a whole one).
    private func endDamage() -> String? {
        if let readError {
            guard let before = framesBeforeDamage, framesDecoded > before else { return readError }
            return "\(readError); the \(framesDecoded - before) frame(s) after it decode"
        }
        guard let declared = info.declaredLength else { return nil }
        // On the input's own clock, which the closed jumps no longer show.
        let end = Double(timestamps.end) * av_q2d(videoStream.pointee.time_base) - (clockJumps?.offset ?? 0)
        guard declared.isShort(decodedFrames: framesDecoded, decodedEnd: end) else { return nil }
        return "the container declares \(declared.description) frames"
    }

    /// What an output adds to every timestamp (AV_TIME_BASE units): video that starts before
    /// zero (a TS whose clock wrapped) starts at zero, else MP4's edit list would hide what
    /// comes before. (Audio alone before zero is AAC's priming, which the edit list rightly
    /// hides.) A file whose clock starts late (a camcorder's or broadcast TS, 1000 s in) starts
    /// at zero, as ffmpeg's output does: the streams keep their offsets from one another.
    var outputStartShift: Int64 {
        let none = velvet_av_nopts_value()
        let start = videoStream.pointee.start_time, fileStart = formatContext.pointee.start_time
        if start != none, start < 0 { return av_rescale_q(-start, videoStream.pointee.time_base, AVRational(num: 1, den: AV_TIME_BASE)) }
        if fileStart != none, fileStart > 0 { return -fileStart }
        return 0
    }

    /// Keeps the first read or decode error, and where it came.
    private func noteDamage(_ reason: String) {
        guard readError == nil else { return }
        readError = reason
        framesBeforeDamage = framesDecoded
    }

    /// EXIF orientation of a still: what its decoder exported (JPEG, WebP), else the tag in
    /// the file (PNG's eXIf chunk, TIFF's first directory), which FFmpeg 5.1 does not export.
    func exifOrientation(of frame: MediaFrame) -> Orientation? {
        if let entry = av_dict_get(frame.pointer.pointee.metadata, "Orientation", nil, 0),
           let value = Int(String(cString: entry.pointee.value).trimmingCharacters(in: .whitespaces)) {
            return Orientation(exif: value)
        }
        let codec = videoStream.pointee.codecpar.pointee.codec_id
        guard codec == AV_CODEC_ID_PNG || codec == AV_CODEC_ID_TIFF, let value = ExifTagReader.orientation(path: info.path) else {
            return nil
        }
        return Orientation(exif: value)
    }

    static func describe(_ code: Int32) -> String { ffmpegMessage(code) }

    /// A WebP file whose VP8X header has the animation flag ("RIFF" size "WEBP" "VP8X" size flags).
    private static func isAnimatedWebP(_ path: String) -> Bool {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, let handle = FileHandle(forReadingAtPath: path),
              let head = try? handle.read(upToCount: 21), head.count == 21 else { return false }
        try? handle.close()
        let bytes = [UInt8](head)
        return bytes[0..<4] == Array("RIFF".utf8)[...] && bytes[8..<16] == Array("WEBPVP8X".utf8)[...] && bytes[20] & 0x02 != 0
    }

    private static func check(_ code: Int32, _ path: String) throws {
        if code < 0 { throw MediaError.cannotOpen(path: path, reason: Self.describe(code)) }
    }
}
