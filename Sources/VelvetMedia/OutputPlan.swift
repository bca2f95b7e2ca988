import CFFmpeg
import Foundation
import VelvetGPU

/// How a render treats its input beyond the encoder settings.
public struct RenderOptions: Sendable, Equatable {
    /// Keep what decodes of a damaged or truncated input (the render warns) instead of failing.
    public var allowTruncated = false
    /// The frame a still output (.png, .jpg) takes from a video input, 0-based.
    public var stillFrame: Int?
    /// The command takes `--frame N` (render): a refusal of a video to a still offers it.
    public var takesFrameChoice = false
    /// Frames the effects left unchanged go through the GPU colour path too (upload, colour
    /// in to the working image, colour out, download) instead of straight to the encoder, so
    /// tests can prove that path loses nothing. Off by default: it only costs time.
    public var forcesGPURoundTrip: Bool

    /// The environment variable (`=1`) that sets `forcesGPURoundTrip` for the CLI.
    public static let forcesGPURoundTripVariable = "VELVET_FORCE_GPU_ROUNDTRIP"

    public init(allowTruncated: Bool = false, stillFrame: Int? = nil,
                forcesGPURoundTrip: Bool = ProcessInfo.processInfo.environment[forcesGPURoundTripVariable] == "1") {
        self.allowTruncated = allowTruncated
        self.stillFrame = stillFrame
        self.forcesGPURoundTrip = forcesGPURoundTrip
    }
}

/// What the output will be, decided from the input's streams before anything is decoded:
/// container and encoder, where each audio and subtitle stream goes, whether the display
/// matrix is kept. Every refusal is made here, in one line, so a render that cannot succeed
/// stops before the work (and before an output file exists).
/// Immutable once made (its pointers are to FFmpeg's static codec and format tables), so the
/// render's threads share it.
struct OutputPlan: @unchecked Sendable {
    enum StreamRoute: Equatable {
        case copy
        /// To AAC, or the container's own audio codec where it holds no AAC (Opus for WebM).
        case reencodeAudio(AVCodecID)
        case convertSubtitles(to: AVCodecID)
    }

    let container: OutputContainer
    let codec: UnsafePointer<AVCodec>
    let settings: EncoderSettings
    /// Input stream index -> how it reaches the output; streams not listed are dropped.
    let routes: [Int: StreamRoute]
    /// The stream's display matrix can go to the output; otherwise the pixels are turned upright.
    let keepsDisplayMatrix: Bool
    /// For a still output: the input frame it takes.
    let stillFrame: Int
    /// A still output from a video of unknown length (standard input) without `--frame`: it
    /// takes the first frame, and a second one refuses the render (the video is no picture).
    let stillNeedsTheOnlyFrame: Bool
    /// A grey input is encoded as colour (the effect's debug view is colour-coded).
    let writesGreyAsColour: Bool
    /// Frames each queue between the render's threads holds (`ThreadQueues.depth`); the fewest
    /// until the decoded format is known.
    private(set) var queueDepth = ThreadQueues.fewestFrames

    var isStillImage: Bool { container.isStillImage }

    /// `keepsLookAheadImages`: the look-ahead keeps a working image per frame (`FrameProcessor`).
    init(reader: MediaReader, output path: String, settings: EncoderSettings, options: RenderOptions,
         effect: FrameEffect?, keepsLookAheadImages: Bool) throws {
        container = try OutputContainer(path: path, formatName: settings.format)
        self.settings = settings
        writesGreyAsColour = effect?.drawsInColour ?? false
        codec = try EncoderTuning.encoder(for: container, settings: settings)
        let info = reader.info
        if codec.pointee.id == AV_CODEC_ID_EXR {
            throw MediaError.output(path: path, reason: "OpenEXR holds linear light and Velvet writes non-linear R'G'B'; "
                                    + "use .png or .tiff (16 bits per channel)")
        }
        let holdsNoVideo = container.format.pointee.video_codec == AV_CODEC_ID_NONE && !container.writesPictures
        let cannotHold = MediaError.output(path: path, reason: (holdsNoVideo ? "\(container.displayName) is an audio-only \(container.name) format, "
                                                                 + "which cannot hold" : "the \(container.name) format cannot hold")
                                           + " \(Self.name(codec.pointee.id)) video (\(String(cString: codec.pointee.name))); "
                                           + Self.containers(holding: codec.pointee.id, besides: container))
        if !container.writesPictures, !container.holds(encoded: codec.pointee.id, type: AVMEDIA_TYPE_VIDEO) { throw cannotHold }
        (stillFrame, stillNeedsTheOnlyFrame) = try Self.stillFrame(of: info, output: container, options: options)
        keepsDisplayMatrix = !container.writesPictures && container.carriesDisplayMatrix
        // y4m holds the video alone; its other streams are dropped, as ffmpeg drops them.
        routes = container.writesPictures || container.holdsOnlyVideo ? [:] : try Self.routes(for: reader, into: container)

        let stored = (info.width, info.height)
        let upright = info.uprightSize
        let size = keepsDisplayMatrix ? stored : upright
        if let effect, min(upright.width, upright.height) < effect.minimumFrameSide {
            throw MediaError.refused(path: info.path, reason: "frame size \(upright.width)x\(upright.height) is below the face tracker's "
                                     + "minimum of \(effect.minimumFrameSide)x\(effect.minimumFrameSide) px (velvet render --no-effects passes it through unchanged)")
        }
        let decoded = AVPixelFormat(rawValue: reader.videoStream.pointee.codecpar.pointee.format)
        guard decoded != AV_PIX_FMT_NONE else { return } // Known only once a frame decodes; checked no further.
        let encoderFormat = try encoderPixelFormat(decoded: decoded)
        if !container.writesPictures {
            // An encoder that cannot be closed before a frame must not meet a header that fails
            // (AV1 is in MOV's codec list, and refused by its header).
            let rate = av_guess_frame_rate(reader.formatContext, reader.videoStream, nil)
            if EncoderTuning.hangWithoutFrames.contains(String(cString: codec.pointee.name)),
               !container.holds(video: codec.pointee.id, width: size.0, height: size.1, pixelFormat: encoderFormat, frameRate: rate) {
                throw cannotHold
            }
            if EncoderSettings.x26xEncoders.contains(String(cString: codec.pointee.name)) {
                try Self.checkEvenSize(size, format: encoderFormat, mayTurn: info.isStillImage, path: path)
            }
            let turned = info.isStillImage ? [size, (size.1, size.0)] : [size]
            for (width, height) in turned {
                try EncoderTuning.checkOpens(codec, settings: settings, width: width, height: height, pixelFormat: encoderFormat,
                                             timeBase: reader.videoStream.pointee.time_base)
            }
        }
        let input = VideoPlaneLayout.closestReadable(to: decoded), output = VideoPlaneLayout.closestReadable(to: encoderFormat)
        let repacked = input.pixelFormat == decoded ? 0 : Self.bytesPerPixel(decoded)
        let pixels = Double(info.width) * Double(info.height)
        queueDepth = ThreadQueues.depth(frameBytes: pixels * max(input.bytesPerPixel + repacked, output.bytesPerPixel))
        // One picture in or out holds one frame at a time: no queues or encoder lookahead fill
        // (an 8K still to .mp4 was estimated at 22 GiB and peaked at 2 GB).
        let isVideo = !(container.isStillImage || info.isStillImage)
        let estimate = MemoryEstimate.render(
            width: info.width, height: info.height, input: input, output: output, repackedBytesPerPixel: repacked,
            isVideo: isVideo, queueDepth: queueDepth, effect: effect, settings: settings,
            looksAhead: isVideo, keepsLookAheadImages: keepsLookAheadImages)
        try MemoryLimit.check(estimate, width: info.width, height: info.height, path: info.path)
    }

    /// The encoder's pixel format for frames decoded as `decoded`: the requested one, else
    /// the input's if the encoder takes it, else yuv420p (yuv420p10le for deep video) for
    /// video and the least lossy one the encoder takes for stills; "J" formats for JPEG.
    func encoderPixelFormat(decoded: AVPixelFormat) throws -> AVPixelFormat {
        let source = writesGreyAsColour ? Self.colourCounterpart(of: decoded) : decoded
        let format = try MediaWriter.encoderPixelFormat(codec: codec, source: source, requested: settings.pixelFormat,
                                                        still: container.writesPictures)
        guard codec.pointee.id == AV_CODEC_ID_MJPEG else { return format }
        let fullRange: [AVPixelFormat: AVPixelFormat] = [AV_PIX_FMT_YUV420P: AV_PIX_FMT_YUVJ420P,
                                                         AV_PIX_FMT_YUV422P: AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUV444P: AV_PIX_FMT_YUVJ444P]
        return fullRange[format] ?? format
    }

    /// The RGB format of a grey one's depth and alpha (gray -> rgb24, ya16 -> rgba64); any
    /// other format as it is.
    static func colourCounterpart(of format: AVPixelFormat) -> AVPixelFormat {
        guard ColorDescription.isGrey(format), let descriptor = av_pix_fmt_desc_get(format)?.pointee else { return format }
        let alpha = descriptor.flags & UInt64(AV_PIX_FMT_FLAG_ALPHA) != 0
        return descriptor.comp.0.depth > 8 ? (alpha ? AV_PIX_FMT_RGBA64LE : AV_PIX_FMT_RGB48LE) : (alpha ? AV_PIX_FMT_RGBA : AV_PIX_FMT_RGB24)
    }

    /// Where a codec can go instead: the common containers (other than `container`) that hold it.
    private static func containers(holding codec: AVCodecID, besides container: OutputContainer) -> String {
        let holding = [".mp4", ".mkv", ".mov"].compactMap { try? OutputContainer(path: "velvet\($0)") }
            .filter { $0.format != container.format && $0.holds(encoded: codec, type: AVMEDIA_TYPE_VIDEO) }.map(\.fileExtension)
        guard let last = holding.last else { return "pick another --codec" }
        return "use " + (holding.count > 1 ? holding.dropLast().joined(separator: ", ") + " or " + last : last)
    }

    /// A still output from a video takes one frame: the one asked for, or the only one.
    private static func stillFrame(of info: MediaInfo, output: OutputContainer, options: RenderOptions) throws -> (Int, onlyFrame: Bool) {
        guard output.isStillImage else {
            if options.stillFrame != nil {
                throw MediaError.output(path: output.path, reason: "--frame picks the frame of a still output (.png, .jpg); this is a video")
            }
            return (0, false)
        }
        let counted = info.isStillImage ? 1 : info.countedFrames
        if let chosen = options.stillFrame {
            // Refused here only against a stated count: a count estimated from the duration
            // misses frames that share a timestamp; the decoding finds the end otherwise.
            if let counted, chosen >= counted {
                throw MediaError.refused(path: info.path, reason: "--frame \(chosen) is past the end (the input has \(counted) frame(s))")
            }
            return (chosen, false)
        }
        if let counted {
            guard counted == 1 else { throw videoIsNoPicture(info: info, frames: counted, output: output, options: options) }
            return (0, false)
        }
        // A length estimated from a duration can be a frame off (NUT states the last frame's
        // start: 0 s for one frame, 0.1 s for two at 10 fps); a few frames or none known (a
        // pipe): one frame may be all there is, and a second refuses the render.
        if let estimated = info.declaredLength?.frames, estimated >= 3 {
            throw videoIsNoPicture(info: info, frames: estimated, output: output, options: options, estimated: true)
        }
        return (0, true)
    }

    /// A video where a still output holds one picture, and no `--frame` chose it.
    static func videoIsNoPicture(info: MediaInfo, frames: Int?, output: OutputContainer, options: RenderOptions,
                                 estimated: Bool = false) -> MediaError {
        let count = frames.map { "\(estimated ? "about " : "")\($0) frames" } ?? "several frames"
        let choice = options.takesFrameChoice ? "pick one with --frame N (0 is the first), or " : ""
        return MediaError.output(path: output.path, reason: "\(info.path) is a video (\(count)) and a \(output.fileExtension) "
                                 + "holds one picture: \(choice)write a video (.mp4)")
    }

    /// x264 and x265 drop the last row or column of a 4:2:0 or 4:2:2 frame of odd size, so
    /// such a size is refused. A still input may yet be turned by its EXIF tag (unknown until
    /// it is decoded), so then both sides must suit either subsampling.
    private static func checkEvenSize(_ size: (width: Int, height: Int), format: AVPixelFormat, mayTurn: Bool, path: String) throws {
        guard let descriptor = av_pix_fmt_desc_get(format) else { return }
        var needsEven = (width: descriptor.pointee.log2_chroma_w > 0, height: descriptor.pointee.log2_chroma_h > 0)
        if mayTurn { needsEven = (needsEven.width || needsEven.height, needsEven.width || needsEven.height) }
        let odd = (needsEven.width && size.width % 2 == 1) || (needsEven.height && size.height % 2 == 1)
        guard odd else { return }
        let sides = needsEven.width && needsEven.height ? "an even width and height" : needsEven.width ? "an even width" : "an even height"
        throw MediaError.output(path: path, reason: "frame size \(size.width)x\(size.height) cannot be encoded as "
                                + "\(PixelRepacker.name(format)), which needs \(sides); use --pix-fmt yuv444p, "
                                + "or crop or pad the input to an even size")
    }

    /// Audio is copied, or re-encoded to AAC where the container cannot hold it; subtitles are
    /// copied, or converted to the container's text format when they are text; anything else
    /// the container cannot take is refused, naming the stream.
    private static func routes(for reader: MediaReader, into container: OutputContainer) throws -> [Int: StreamRoute] {
        var routes: [Int: StreamRoute] = [:]
        for index in reader.copiedStreamIndices {
            let parameters = reader.formatContext.pointee.streams[index]!.pointee.codecpar!
            let codec = parameters.pointee.codec_id
            if container.holds(copyOf: parameters) {
                routes[index] = .copy
            } else if parameters.pointee.codec_type == AVMEDIA_TYPE_AUDIO, let audio = container.audioCodecForReencoding {
                routes[index] = .reencodeAudio(audio)
            } else if parameters.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE, OutputContainer.isTextSubtitle(codec),
                      let target = container.textSubtitleCodec {
                routes[index] = .convertSubtitles(to: target)
            } else {
                let kind = parameters.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE ? "subtitles" : "audio"
                let matroska = try OutputContainer(path: "velvet.mkv")
                let wayOut = matroska.holds(copyOf: parameters) ? "write .mkv, which holds it" : "remove it first (ffmpeg -map)"
                throw MediaError.output(path: container.path, reason: "input stream #\(index) (\(name(codec)) \(kind)) cannot go into "
                                        + "\(container.displayName); \(wayOut)")
            }
        }
        // Attached files (an ASS track's fonts) go where Matroska's do, into Matroska; elsewhere
        // they are dropped, as ffmpeg drops them.
        if container.name == "matroska" {
            for index in reader.attachmentStreamIndices { routes[index] = .copy }
        }
        return routes
    }

    static func name(_ codec: AVCodecID) -> String { String(cString: avcodec_get_name(codec)) }

    private static func bytesPerPixel(_ format: AVPixelFormat) -> Double {
        Double(av_image_get_buffer_size(format, 64, 64, 1)) / (64 * 64)
    }
}
