import CFFmpeg
import Foundation
import VelvetFiles
import VelvetGPU

/// What a render did.
public struct RenderSummary: Sendable {
    public var frames: Int
    public var seconds: Double
    public var framesPerSecond: Double { seconds > 0 ? Double(frames) / seconds : 0 }
    /// Milliseconds of GPU time per section (upload, color_in, effects..., color_out, download), summed over frames.
    public var gpuMilliseconds: [String: Double]
    public var input: MediaInfo
    /// Seconds each of the three threads spent working (not waiting on its queues): the
    /// largest is the bottleneck. `gpu` includes the CPU's recording and its waits on the
    /// GPU; `encode` includes muxing.
    public var busySeconds: (decode: Double, gpu: Double, encode: Double) = (0, 0, 0)
}

/// Seconds of work, summed; one per thread, so no lock.
private final class BusyClock: @unchecked Sendable {
    private(set) var seconds = 0.0
    func measure<T>(_ work: () throws -> T) rethrows -> T {
        let start = DispatchTime.now().uptimeNanoseconds
        defer { seconds += Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }
        return try work()
    }
}

/// Decode -> GPU -> encode, on three threads linked by bounded queues so the stages
/// overlap while at most a few frames are in flight (memory stays flat on long videos).
public final class VideoRenderer: @unchecked Sendable {
    public let context: GPUContext
    private let converter: ColorConverter

    public init(context: GPUContext) throws {
        self.context = context
        converter = try ColorConverter(context: context)
    }

    /// - Parameters:
    ///   - commit: how the finished output is moved into place (replacing a file there or not).
    ///   - cpuOnly: skip the GPU and hand decoded frames straight to the encoder: a plain FFmpeg
    ///     transcode through the same libraries and threads (the benchmark anchor).
    public func render(input: String, output: String, settings: EncoderSettings = EncoderSettings(),
                       effect: FrameEffect? = nil, progress: ProgressReporter? = nil,
                       cancellation: CancellationFlag = CancellationFlag(), commit: CommitPolicy = .replace,
                       cpuOnly: Bool = false) throws -> RenderSummary {
        let started = Date()
        let reader = try MediaReader(path: input)
        let decoded = BoundedQueue<Stage>(capacity: 3)
        let processed = BoundedQueue<Stage>(capacity: 3)
        let decodeClock = BusyClock(), gpuClock = BusyClock(), encodeClock = BusyClock()

        // Decode thread.
        let decodeThread = Thread {
            let inputConverter = InputConverter()
            defer { decoded.close() }
            do {
                while let item = try decodeClock.measure({ try reader.next() }) {
                    if cancellation.isCancelled { return }
                    switch item {
                    case .video(let frame):
                        let ready = try decodeClock.measure {
                            VideoPlaneLayout(frame.pixelFormat) == nil ? try inputConverter.toRGBA(frame) : frame
                        }
                        guard decoded.push(.frame(ready)) else { return }
                    case .packet(let packet, let index):
                        guard decoded.push(.packet(packet, index)) else { return }
                    }
                }
                decoded.push(.end)
            } catch {
                decoded.push(.failure(error))
            }
        }

        // GPU thread: the first frame decides the plan; the writer is opened from it.
        let writerBox = WriterBox()
        let gpuThread = Thread { [converter, context] in
            defer { processed.close() }
            var processor: FrameProcessor?
            var index = 0
            while let stage = decoded.pop() {
                if cancellation.isCancelled { return }
                do {
                    switch stage {
                    case .frame(let frame):
                        if cpuOnly {
                            if writerBox.writer == nil {
                                let (codec, still) = try MediaWriter.encoder(for: output, settings: settings)
                                let format = try MediaWriter.encoderPixelFormat(codec: codec, source: frame.pixelFormat,
                                                                                requested: settings.pixelFormat, still: still)
                                writerBox.open(try MediaWriter(path: output, reader: reader, size: (frame.width, frame.height),
                                                               sourcePixelFormat: frame.pixelFormat, encoderPixelFormat: format,
                                                               color: ColorDescription(frame: frame.pointer, layout: VideoPlaneLayout(frame.pixelFormat)),
                                                               settings: settings, commit: commit))
                            }
                            frame.pointer.pointee.pts = frame.timestamp
                            guard processed.push(.frame(frame)) else { return }
                            continue
                        }
                        if processor == nil {
                            let plan = try Self.plan(for: frame, reader: reader, output: output, settings: settings)
                            processor = try FrameProcessor(context: context, converter: converter, plan: plan)
                            writerBox.open(try MediaWriter(path: output, reader: reader, size: plan.outputSize,
                                                           sourcePixelFormat: plan.outputLayout.pixelFormat,
                                                           encoderPixelFormat: plan.encoderPixelFormat,
                                                           color: plan.outputColor, settings: settings, commit: commit))
                        }
                        let time = Double(frame.timestamp) * av_q2d(reader.videoStream.pointee.time_base)
                        let result = try gpuClock.measure {
                            try processor!.process(frame, index: index, time: time, isStillImage: reader.info.isStillImage,
                                                   effect: effect)
                        }
                        writerBox.add(processor!.lastTimings)
                        index += 1
                        guard processed.push(.frame(result)) else { return }
                    default:
                        guard processed.push(stage) else { return }
                        if case .end = stage { return }
                        if case .failure = stage { return }
                    }
                } catch {
                    processed.push(.failure(error))
                    return
                }
            }
        }
        decodeThread.stackSize = 8 << 20
        gpuThread.stackSize = 8 << 20
        decodeThread.start()
        gpuThread.start()

        // Encode on this thread.
        var frames = 0
        var failure: Error?
        defer {
            decoded.close()
            processed.close()
        }
        loop: while let stage = processed.pop() {
            if cancellation.isCancelled { failure = MediaError.interrupted; break }
            do {
                switch stage {
                case .frame(let frame):
                    let writer = writerBox.writer!
                    try encodeClock.measure { try writer.encode(frame) }
                    frames += 1
                    progress?.update(frames: frames, total: reader.info.announcedFrameCount)
                    if writer.isStillImage {
                        // A still output takes the first frame.
                        try writer.finish()
                        break loop
                    }
                case .packet(let packet, let index):
                    // Packets before the first frame arrive before the writer exists: keep them.
                    if let writer = writerBox.writer { try writer.writeCopied(packet, inputStreamIndex: index) }
                    else { writerBox.early.append((packet, index)) }
                case .end:
                    guard let writer = writerBox.writer else { throw MediaError.decode(path: input, reason: "no video frame") }
                    try encodeClock.measure { try writer.finish() }
                    break loop
                case .failure(let error):
                    throw error
                }
                if let writer = writerBox.writer, !writerBox.early.isEmpty {
                    for (packet, index) in writerBox.early { try writer.writeCopied(packet, inputStreamIndex: index) }
                    writerBox.early.removeAll()
                }
            } catch {
                failure = error
                break
            }
        }
        progress?.finish()
        decoded.close()
        processed.close()
        decodeThread.cancel()
        while !(decodeThread.isFinished && gpuThread.isFinished) { usleep(1000) }
        if failure == nil && cancellation.isCancelled && writerBox.writer?.isFinished != true { failure = MediaError.interrupted }
        if let failure {
            cancellation.cancel()
            decoded.close()
            processed.close()
            writerBox.writer?.abort()
            throw failure
        }
        return RenderSummary(frames: frames, seconds: Date().timeIntervalSince(started),
                             gpuMilliseconds: writerBox.timings, input: reader.info,
                             busySeconds: (decodeClock.seconds, gpuClock.seconds, encodeClock.seconds))
    }

    /// Chooses output layout, colour and orientation for the first frame.
    static func plan(for frame: MediaFrame, reader: MediaReader, output: String, settings: EncoderSettings) throws -> FrameProcessor.Plan {
        guard let inputLayout = VideoPlaneLayout(frame.pixelFormat) else {
            throw MediaError.unsupported("pixel format \(String(cString: av_get_pix_fmt_name(frame.pixelFormat)))")
        }
        let inputColor = ColorDescription(frame: frame.pointer, layout: inputLayout)
        let exif = reader.info.isStillImage ? reader.exifOrientation(of: frame) : nil
        let inputOrientation = exif ?? reader.info.orientation
        let (codec, still) = try MediaWriter.encoder(for: output, settings: settings)
        // Choose from the format as decoded (rgb24 stays rgb24 even though the GPU reads it as RGBA).
        let decoded = AVPixelFormat(rawValue: reader.videoStream.pointee.codecpar.pointee.format)
        var encoderFormat = try MediaWriter.encoderPixelFormat(codec: codec, source: decoded == AV_PIX_FMT_NONE ? inputLayout.pixelFormat : decoded,
                                                               requested: settings.pixelFormat, still: still)
        if codec.pointee.id == AV_CODEC_ID_MJPEG {
            // JPEG is full range: the "J" formats.
            let fullRange: [AVPixelFormat: AVPixelFormat] = [AV_PIX_FMT_YUV420P: AV_PIX_FMT_YUVJ420P,
                                                             AV_PIX_FMT_YUV422P: AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUV444P: AV_PIX_FMT_YUVJ444P]
            encoderFormat = fullRange[encoderFormat] ?? encoderFormat
        }
        // The GPU writes the encoder's format when it can, else RGBA for swscale (exact for 8-bit RGB).
        let outputLayout = VideoPlaneLayout(encoderFormat) ?? VideoPlaneLayout(AV_PIX_FMT_RGBA)!
        let outputColor: ColorDescription
        if outputLayout.kind == .rgba {
            outputColor = ColorDescription.rgbToVideo
        } else if inputLayout.kind == .rgba {
            outputColor = still ? .rgbToJPEG : .rgbToVideo
        } else {
            var color = inputColor
            if outputLayout.forcesFullRange { color.fullRange = true }
            outputColor = color
        }
        // Stills are written upright (their encoders keep no orientation tag); videos keep the display matrix.
        let outputOrientation = still ? Orientation.identity : inputOrientation
        return FrameProcessor.Plan(inputLayout: inputLayout, outputLayout: outputLayout, encoderPixelFormat: encoderFormat,
                                   inputColor: inputColor,
                                   outputColor: outputLayout.kind == .rgba ? inputColor : outputColor,
                                   inputOrientation: inputOrientation, outputOrientation: outputOrientation,
                                   storedWidth: frame.width, storedHeight: frame.height)
    }

    enum Stage {
        case frame(MediaFrame)
        case packet(MediaPacket, Int)
        case end
        case failure(Error)
    }
}

/// The writer, opened on the GPU thread once the first frame is known, then used only on
/// the encode thread; the queue hand-off orders the two.
private final class WriterBox: @unchecked Sendable {
    private let lock = NSLock()
    private var opened: MediaWriter?
    private var sums: [String: Double] = [:]
    var early: [(MediaPacket, Int)] = []

    var writer: MediaWriter? { lock.withLock { opened } }
    var timings: [String: Double] { lock.withLock { sums } }
    func open(_ writer: MediaWriter) { lock.withLock { opened = writer } }
    func add(_ timings: GPUTimings) {
        lock.withLock { for section in timings.sections { sums[section.label, default: 0] += section.milliseconds } }
    }
}
