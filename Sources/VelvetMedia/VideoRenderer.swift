import CFFmpeg
import Foundation
import VelvetFiles
import VelvetGPU

/// What a render did.
public struct RenderSummary: Sendable {
    public var frames: Int
    public var seconds: Double
    public var framesPerSecond: Double { seconds > 0 ? Double(frames) / seconds : 0 }
    /// Seconds from the start to the first frame handed to the encoder (opening, model
    /// loading, the look-ahead filling): the start-up, apart from the steady state.
    public var firstFrameSeconds = 0.0
    /// Frames after the first per second from the first frame handed to the encoder to the end
    /// (the encoder's flush included: it encodes the frames it buffered; 0 below two frames).
    public var steadyFramesPerSecond: Double {
        frames > 1 && seconds > firstFrameSeconds ? Double(frames - 1) / (seconds - firstFrameSeconds) : 0
    }
    /// Milliseconds of GPU time per section (upload, color_in, effects..., color_out, download), summed over frames.
    public var gpuMilliseconds: [String: Double]
    public var input: MediaInfo
    /// Seconds each thread spent working (not waiting on its queues): the largest is the
    /// bottleneck. `gpu` includes the CPU's recording and its waits on the GPU; `encode`
    /// includes muxing; `lookAhead` is the effect's look-ahead thread (the tracker, with its
    /// own waits on the GPU; 0 without look-ahead).
    public var busySeconds: (decode: Double, gpu: Double, encode: Double, lookAhead: Double) = (0, 0, 0, 0)
    /// CPU seconds the same threads used over their busy spans (a wait that spins shows here,
    /// a wait that sleeps does not), and the whole process's CPU seconds over the render
    /// (the encoder's and decoder's own threads and the driver's included).
    public var cpuSeconds: (decode: Double, gpu: Double, encode: Double, lookAhead: Double, process: Double) = (0, 0, 0, 0, 0)
    /// What was wrong with an input that was rendered anyway (`RenderOptions.allowTruncated`), one line each.
    public var warnings: [String] = []
    /// Frames the effect looked ahead (0: none), and the most bytes of decoded frames held for it at once.
    public var lookAhead = 0
    public var lookAheadPeakBytes = 0
}

/// Seconds of work, summed, in wall time and in the thread's CPU time; one per thread, so no lock.
private final class BusyClock: @unchecked Sendable {
    private(set) var seconds = 0.0
    private(set) var cpuSeconds = 0.0
    func measure<T>(_ work: () throws -> T) rethrows -> T {
        let start = DispatchTime.now().uptimeNanoseconds
        let cpuStart = CPUTime.thread()
        defer {
            seconds += Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            cpuSeconds += CPUTime.thread() - cpuStart
        }
        return try work()
    }
}

/// Decode -> GPU -> encode, on three threads linked by bounded queues so the stages
/// overlap while at most a few frames are in flight (memory stays flat on long videos).
public final class VideoRenderer: @unchecked Sendable {
    public let context: GPUContext
    private let converter: ColorConverter
    /// Whether a look-ahead keeps its working image of every frame not yet rendered, which
    /// the render then reads instead of converting the frame again (`FrameProcessor`): the
    /// device's way (a CPU device keeps them) unless set.
    public var keepsLookAheadImages: Bool

    public init(context: GPUContext) throws {
        self.context = context
        converter = try ColorConverter(context: context)
        keepsLookAheadImages = FrameProcessor.keepsLookAheadImages(on: context.device.kind)
    }

    /// - Parameters:
    ///   - commit: how the finished output is moved into place (replacing a file there or not).
    ///   - cpuOnly: skip the GPU and hand decoded frames straight to the encoder: a plain FFmpeg
    ///     transcode through the same libraries and threads (the benchmark anchor).
    public func render(input: String, output: String, settings: EncoderSettings = EncoderSettings(),
                       options: RenderOptions = RenderOptions(), effect: FrameEffect? = nil, progress: ProgressReporter? = nil,
                       cancellation: CancellationFlag = CancellationFlag(), commit: CommitPolicy = .replace,
                       cpuOnly: Bool = false) throws -> RenderSummary {
        let started = Date()
        let processCPUStart = CPUTime.process()
        let traceStart = DispatchTime.now().uptimeNanoseconds
        let reader = try MediaReader(path: input)
        reader.keepsTruncated = options.allowTruncated
        // Every refusal comes here, before anything is decoded.
        let keepsLookAheadImages = self.keepsLookAheadImages
        let outputPlan = try OutputPlan(reader: reader, output: output, settings: settings, options: options,
                                        effect: cpuOnly ? nil : effect, keepsLookAheadImages: keepsLookAheadImages)
        let decoded = BoundedQueue<Stage>(capacity: outputPlan.queueDepth, name: "decoded")
        let processed = BoundedQueue<Stage>(capacity: outputPlan.queueDepth, name: "processed")
        let decodeClock = BusyClock(), gpuClock = BusyClock(), encodeClock = BusyClock()

        // Decode thread.
        let decodeThread = Thread { [context] in
            Trace.nameThread("v-decode")
            let repacker = PixelRepacker()
            var position = 0
            defer { decoded.close() }
            do {
                while let item = try decodeClock.measure({ try Trace.span("decode") { try reader.next() } }) {
                    if cancellation.isCancelled { return }
                    switch item {
                    case .video(let frame):
                        defer { position += 1 }
                        // A still output takes one frame: skip to it (without GPU work), stop after it.
                        if outputPlan.isStillImage && position < outputPlan.stillFrame { continue }
                        let ready = try decodeClock.measure { try Trace.span("repack") { try repacker.readable(frame) } }
                        if !cpuOnly { try decodeClock.measure { try FrameStaging.stage(ready, context: context) } }
                        guard decoded.push(.frame(ready)) else { return }
                        if outputPlan.isStillImage {
                            if outputPlan.stillNeedsTheOnlyFrame, try Self.hasAnotherFrame(reader) {
                                throw OutputPlan.videoIsNoPicture(info: reader.info, frames: nil, output: outputPlan.container, options: options)
                            }
                            decoded.push(.end)
                            return
                        }
                    case .packet(let packet, let index):
                        guard decoded.push(.packet(packet, index)) else { return }
                    }
                }
                if outputPlan.isStillImage {
                    throw MediaError.refused(path: input, reason: "--frame \(outputPlan.stillFrame) is past the end (the input has \(position) frame(s))")
                }
                decoded.push(.end)
            } catch {
                decoded.push(.failure(error))
            }
        }

        // GPU thread: the first frame decides the plan; the writer is opened from it. With an
        // effect's look-ahead, each frame is first shown to it (on the look-ahead thread) and
        // then held (with the packets that follow it, so the order to the encoder is unchanged)
        // until K + L later frames have been shown (L: `FrameProcessor.lookAheadLead`), or the
        // input ends: the look-ahead of frames N + K + 1 ... N + K + L runs while frame N is
        // recorded, which needs only N + K's.
        let writerBox = WriterBox()
        let lookAhead = cpuOnly || reader.info.isStillImage || outputPlan.isStillImage ? 0 : max(0, effect?.lookAhead ?? 0)
        let held = HeldFrames()
        // The effect loads its models while the decoder, the encoder and the GPU images are set up.
        let preparation = cpuOnly ? nil : effect.map {
            EffectPreparation(effect: $0, input: EffectInput(isStillImage: reader.info.isStillImage, looksAhead: lookAhead > 0,
                                                             uprightSize: reader.info.isStillImage ? nil : reader.info.uprightSize))
        }
        let gpuThread = Thread { [converter, context] in
            Trace.nameThread("v-gpu")
            defer { processed.close() }
            var processor: FrameProcessor?
            defer {
                processor?.closeLookAhead()
                writerBox.lookAheadBusySeconds = processor?.lookAheadBusySeconds ?? (0, 0)
            }
            var index = 0, lookedAt = 0
            var writerRequested = false
            /// With look-ahead: the frames submitted and not yet waited for, oldest first. The
            /// newest is waited for only after the next frame has been shown to the look-ahead
            /// (the two overlap on the GPU); with an effect that takes two frames in flight, also
            /// only after the next frame has been recorded and submitted (the GPU runs one frame
            /// while the CPU records the next).
            var inFlight: [FrameProcessor.Pending] = []
            let framesInFlight = FrameProcessor.framesInFlight(for: effect)
            func time(_ frame: MediaFrame) -> Double { Double(frame.timestamp) * av_q2d(reader.videoStream.pointee.time_base) }
            /// Processes a frame and queues it for the encoder; false once the queue is closed.
            func render(_ frame: MediaFrame) throws -> Bool {
                let result = try gpuClock.measure {
                    try Trace.span("frame.process") {
                        try processor!.process(frame, index: index, time: time(frame), isStillImage: reader.info.isStillImage,
                                               effect: effect)
                    }
                }
                writerBox.add(processor!.lastTimings)
                index += 1
                return processed.push(.frame(result))
            }
            /// Waits for the frames in flight, oldest first, until at most `keeping` are left, and
            /// queues them; false once the queue is closed.
            func finishInFlight(keeping: Int = 0) throws -> Bool {
                while inFlight.count > keeping {
                    let pending = inFlight.removeFirst()
                    let result = try gpuClock.measure { try Trace.span("frame.finish") { try processor!.finish(pending) } }
                    writerBox.add(processor!.lastTimings)
                    guard processed.push(.frame(result)) else { return false }
                }
                return true
            }
            /// Queues a stage behind the frames in flight, keeping the input's order.
            func push(_ stage: Stage) throws -> Bool {
                guard try finishInFlight() else { return false }
                return processed.push(stage)
            }
            /// Hands on the held stages up to and including the first frame (all at the end);
            /// that frame is submitted and left in flight.
            func release(all: Bool) throws -> Bool {
                while let stage = held.popFirst() {
                    if cancellation.isCancelled { return false }
                    if case .frame(let frame) = stage {
                        guard try finishInFlight(keeping: framesInFlight - 1) else { return false }
                        // Frame N's faces need the look-ahead through frame N + K.
                        try Trace.span("lookahead.wait") {
                            try processor!.waitForLookAhead(frames: all ? lookedAt : index + lookAhead + 1)
                        }
                        inFlight.append(try gpuClock.measure {
                            try Trace.span("frame.begin") {
                                try processor!.begin(frame, index: index, time: time(frame), isStillImage: false, effect: effect)
                            }
                        })
                        index += 1
                        if !all { return true }
                    } else if !(try push(stage)) {
                        return false
                    }
                }
                return try finishInFlight()
            }
            while let stage = decoded.pop() {
                if cancellation.isCancelled { return }
                do {
                    switch stage {
                    case .frame(let frame):
                        if cpuOnly {
                            if !writerRequested {
                                writerRequested = true
                                guard processed.push(.openWriter { try MediaWriter(path: output, reader: reader, size: (frame.width, frame.height),
                                                               sourcePixelFormat: frame.pixelFormat,
                                                               encoderPixelFormat: try outputPlan.encoderPixelFormat(decoded: frame.pixelFormat),
                                                               color: ColorDescription(frame: frame.pointer, layout: VideoPlaneLayout(frame.pixelFormat)),
                                                               settings: settings, setup: WriterSetup(routes: outputPlan.routes,
                                                                                                      keepsDisplayMatrix: outputPlan.keepsDisplayMatrix,
                                                                                                      iccProfile: frame.iccProfile),
                                                               commit: commit) }) else { return }
                            }
                            frame.pointer.pointee.pts = frame.timestamp
                            guard processed.push(.frame(frame)) else { return }
                            continue
                        }
                        if processor == nil {
                            let plan = try Self.plan(for: frame, reader: reader, output: outputPlan)
                            processor = try FrameProcessor(context: context, converter: converter, plan: plan,
                                                           forcesRoundTrip: options.forcesGPURoundTrip, lookAhead: lookAhead,
                                                           framesInFlight: framesInFlight, keepsLookAheadImages: keepsLookAheadImages)
                            let setup = WriterSetup(routes: outputPlan.routes, keepsDisplayMatrix: plan.outputOrientation != .identity,
                                                    hdr: HDRMetadata(stream: reader.videoStream, firstFrame: frame),
                                                    fieldOrder: frame.fieldOrder(stream: reader.videoStream),
                                                    turnsAQuarter: plan.inputOrientation.quarterTurns % 2 != plan.outputOrientation.quarterTurns % 2,
                                                    iccProfile: frame.iccProfile)
                            // Opened on the encode thread (x264 takes ~10 ms to open) while this
                            // thread starts on the frames.
                            guard processed.push(.openWriter { try MediaWriter(path: output, reader: reader, size: plan.outputSize,
                                                           sourcePixelFormat: plan.outputLayout.pixelFormat,
                                                           encoderPixelFormat: plan.encoderPixelFormat,
                                                           color: plan.outputColor, settings: settings, setup: setup,
                                                           commit: commit) }) else { return }
                            try Trace.span("effect.prepare.wait") { try preparation?.wait() }
                        }
                        guard lookAhead > 0, let effect else {
                            guard try render(frame) else { return }
                            continue
                        }
                        // The frames in flight run on the GPU meanwhile.
                        try gpuClock.measure {
                            try Trace.span("lookahead.show") {
                                try processor!.lookAhead(frame, index: lookedAt, time: time(frame), effect: effect,
                                                         onTimings: { writerBox.add($0) })
                            }
                        }
                        lookedAt += 1
                        held.append(.frame(frame), bytes: frame.byteCount)
                        if held.frames > lookAhead + FrameProcessor.lookAheadLead { guard try release(all: false) else { return } }
                    case .packet where !held.isEmpty:
                        held.append(stage, bytes: 0)
                    case .end:
                        guard try release(all: true) else { return }
                        processed.push(stage)
                        return
                    default:
                        guard try push(stage) else { return }
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
        Trace.nameThread("v-encode", system: false)
        defer {
            // The render as one span on the calling thread (a trace holds every render of the process).
            Trace.shared?.record("render", since: traceStart)
            Trace.shared?.save()
        }
        var frames = 0
        var firstFrameSeconds = 0.0
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
                    try encodeClock.measure { try Trace.span("encode") { try writer.encode(frame) } }
                    frames += 1
                    if frames == 1 { firstFrameSeconds = Date().timeIntervalSince(started) }
                    progress?.update(frames: frames, total: reader.info.progressTotal)
                    if writer.isStillImage && !outputPlan.stillNeedsTheOnlyFrame {
                        // A still output takes the first frame (from a pipe, once no second one came: `.end`).
                        try writer.finish()
                        break loop
                    }
                case .openWriter(let open):
                    writerBox.open(try Trace.span("writer.open") { try open() })
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
        // No thread outlives the render, also where no frame came to wait for the preparation.
        preparation?.waitUntilFinished()
        if failure == nil && cancellation.isCancelled && writerBox.writer?.isFinished != true { failure = MediaError.interrupted }
        if let failure {
            cancellation.cancel()
            decoded.close()
            processed.close()
            writerBox.writer?.abort()
            // A stream (standard output, a FIFO) keeps what was already sent: say so.
            if case .truncated(let path, let frames, let reason) = failure as? MediaError, let writer = writerBox.writer,
               writer.sendsAsItWrites, writer.framesWritten > 0 {
                throw MediaError.truncatedAfterSending(path: path, frames: frames, reason: reason, output: output)
            }
            throw failure
        }
        let lookAheadBusy = writerBox.lookAheadBusySeconds
        return RenderSummary(frames: frames, seconds: Date().timeIntervalSince(started),
                             firstFrameSeconds: firstFrameSeconds,
                             gpuMilliseconds: writerBox.timings, input: reader.info,
                             busySeconds: (decodeClock.seconds, gpuClock.seconds, encodeClock.seconds, lookAheadBusy.wall),
                             cpuSeconds: (decodeClock.cpuSeconds, gpuClock.cpuSeconds, encodeClock.cpuSeconds, lookAheadBusy.cpu,
                                          CPUTime.process() - processCPUStart),
                             warnings: reader.warnings + [Self.alphaWarning(reader), Self.otherVideoWarning(reader), writerBox.writer?.warning].compactMap { $0 } + ((cpuOnly ? nil : effect).map { Self.trackingWarnings(reader) + Self.hdrWarnings(reader) + $0.warnings } ?? []),
                             lookAhead: lookAhead, lookAheadPeakBytes: held.peakBytes)
    }

    /// A YUV input's alpha, which is not read, said once (the output is opaque).
    static func alphaWarning(_ reader: MediaReader) -> String? {
        let parameters = reader.videoStream.pointee.codecpar.pointee
        let format = AVPixelFormat(rawValue: parameters.format)
        // A JPEG holds no alpha: FFmpeg reads a YCCK one (Adobe's CMYK) as yuva444p, the K folded
        // into the colour and the alpha plane opaque.
        guard VideoPlaneLayout.dropsAlpha(format), parameters.codec_id != AV_CODEC_ID_MJPEG else { return nil }
        return "\(reader.info.path) has alpha (\(MediaFrame.name(of: format))), which Velvet does not keep for YUV video: the output is opaque"
    }

    /// Only one video stream is rendered; ffmpeg's default mapping leaves the others out too,
    /// but silently, and a second camera angle lost without a word is data lost.
    static func otherVideoWarning(_ reader: MediaReader) -> String? {
        let others = reader.otherVideoStreamIndices
        guard !others.isEmpty else { return nil }
        let list = others.map { "#0:\($0)" }.joined(separator: ", ")
        return "\(reader.info.path) has \(others.count + 1) video streams: stream #0:\(reader.videoStreamIndex) is rendered, "
            + "\(list) \(others.count == 1 ? "is" : "are") left out"
    }

    /// What the face tracker cannot do right with this input, said once: non-square pixels
    /// (DV, HDV) reach its models as they are stored, so a face looks narrower or wider to them.
    static func trackingWarnings(_ reader: MediaReader) -> [String] {
        let aspect = av_guess_sample_aspect_ratio(reader.formatContext, reader.videoStream, nil)
        // Within 3 % of square (a scaled clip's 384:385) a face keeps its shape to the models.
        guard aspect.num > 0, aspect.den > 0, abs(av_q2d(aspect) - 1) > 0.03 else { return [] }
        return ["\(reader.info.path) has non-square pixels (SAR \(aspect.num):\(aspect.den)); the face tracker reads them as square, "
                + "so the effect may land off the faces: render a square-pixel copy (ffmpeg -vf scale=iw*sar:ih,setsar=1)"]
    }

    /// HDR input (a PQ or HLG transfer), said once: the effects work on its code values as on
    /// SDR video, so a makeup colour or a LUT made for SDR lands elsewhere (a lipstick's full red
    /// is a PQ code of 10,000 nits). The tags and HDR metadata are kept.
    static func hdrWarnings(_ reader: MediaReader) -> [String] {
        let names = [AVCOL_TRC_SMPTE2084: "PQ", AVCOL_TRC_ARIB_STD_B67: "HLG"]
        guard let name = names[reader.videoStream.pointee.codecpar.pointee.color_trc] else { return [] }
        return ["\(reader.info.path) is HDR (\(name)); the effects work on its code values as on SDR video, so makeup colours "
                + "and LUTs made for SDR look different (brighter) on it: tone-map it to SDR first for an SDR look"]
    }

    /// Whether the reader holds another video frame (what is left of it is read).
    private static func hasAnotherFrame(_ reader: MediaReader) throws -> Bool {
        while let item = try reader.next() {
            if case .video = item { return true }
        }
        return false
    }

    /// Chooses output layout, colour and orientation for the first frame.
    static func plan(for frame: MediaFrame, reader: MediaReader, output: OutputPlan) throws -> FrameProcessor.Plan {
        guard let inputLayout = VideoPlaneLayout(frame.pixelFormat) else {
            throw MediaError.unsupported("pixel format \(PixelRepacker.name(frame.pixelFormat))")
        }
        let inputColor = ColorDescription(frame: frame.pointer, layout: inputLayout)
        let exif = reader.info.isStillImage ? reader.exifOrientation(of: frame) : nil
        let inputOrientation = exif ?? reader.info.orientation
        // Choose from the format as decoded (rgb24 stays rgb24 even though the GPU reads it as RGBA).
        let decoded = AVPixelFormat(rawValue: reader.videoStream.pointee.codecpar.pointee.format)
        let encoderFormat = try output.encoderPixelFormat(decoded: decoded == AV_PIX_FMT_NONE ? inputLayout.pixelFormat : decoded)
        // The GPU writes the encoder's format when it can, else the closest one for swscale to
        // repack; the input's own where only the planes' packing differs (yuv420p for nv12), so
        // the pixels the effect leaves are copied, not converted through RGB (which resampled
        // the chroma), and swscale repacks them exactly.
        // The range the encoder's YUV must hold, where it is not free to keep the input's: full
        // for a "J" format (JPEG), limited for an encoder that knows no other (a limited-range
        // video to JPEG kept its levels, 16 for black, under a full-range tag).
        let encoderRange: Bool? = VideoPlaneLayout(encoderFormat)?.forcesFullRange == true ? true
            : ColorDescription.limitedRangeEncoders.contains(String(cString: output.codec.pointee.name)) ? false : nil
        let keepsRange = inputLayout.kind == .rgba || encoderRange.map { $0 == inputColor.fullRange } ?? true
        let outputLayout = keepsRange && VideoPlaneLayout.repacksExactly(inputLayout.pixelFormat, to: encoderFormat) ? inputLayout
            : VideoPlaneLayout.closestReadable(to: encoderFormat)
        var outputColor: ColorDescription
        if outputLayout.kind == .rgba {
            outputColor = inputColor
        } else {
            outputColor = inputLayout.kind != .rgba ? inputColor : output.container.writesPictures ? .jpeg(fromRGB: inputColor)
                : .video(fromRGB: inputColor, statesMatrix: output.container.statesMatrix)
            // RGB made YUV for a "J" format too (`--pix-fmt yuvj444p` was written limited, tagged full).
            if let encoderRange, encoderRange != outputColor.fullRange { (outputColor.fullRange, outputColor.statesRange) = (encoderRange, true) }
            if outputLayout.forcesFullRange { outputColor.fullRange = true }
        }
        // The display matrix is kept where the container carries it; anything else (stills,
        // Matroska, AVI, an EXIF tag, which is no stream matrix) is written upright.
        let outputOrientation = output.keepsDisplayMatrix && exif == nil ? inputOrientation : .identity
        return FrameProcessor.Plan(inputLayout: inputLayout, outputLayout: outputLayout, encoderPixelFormat: encoderFormat,
                                   inputColor: inputColor, outputColor: outputColor,
                                   inputOrientation: inputOrientation, outputOrientation: outputOrientation,
                                   storedWidth: frame.width, storedHeight: frame.height)
    }

    enum Stage {
        case frame(MediaFrame)
        case packet(MediaPacket, Int)
        case end
        case failure(Error)
        /// Opens the output (ahead of the first frame).
        case openWriter(() throws -> MediaWriter)
    }
}

/// `FrameEffect.prepare` on a thread of its own, started as the render begins: the GPU thread
/// waits for it before the effect's first frame, and the render for it before it returns.
private final class EffectPreparation: @unchecked Sendable {
    private let condition = NSCondition()
    private var finished = false
    private var failure: Error?

    init(effect: FrameEffect, input: EffectInput) {
        let thread = Thread { [self] in
            Trace.nameThread("v-prepare")
            var error: Error?
            do { try Trace.span("effect.prepare") { try effect.prepare(for: input) } } catch let caught { error = caught }
            condition.withLock {
                (failure, finished) = (error, true)
                condition.broadcast()
            }
        }
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Blocks until the effect is prepared; throws what preparing it threw.
    func wait() throws {
        try condition.withLock {
            while !finished { condition.wait() }
            if let failure { throw failure }
        }
    }

    func waitUntilFinished() { condition.withLock { while !finished { condition.wait() } } }
}

/// The decoded frames (and the packets after them) waiting on the effect's look-ahead: used
/// on the GPU thread only; the largest size it reached is read once the thread has ended.
private final class HeldFrames: @unchecked Sendable {
    private var stages: [VideoRenderer.Stage] = []
    private var bytes: [Int] = []
    private var heldBytes = 0
    private(set) var frames = 0
    private(set) var peakBytes = 0
    var isEmpty: Bool { stages.isEmpty }

    func append(_ stage: VideoRenderer.Stage, bytes size: Int) {
        stages.append(stage)
        bytes.append(size)
        if case .frame = stage { frames += 1 }
        heldBytes += size
        peakBytes = max(peakBytes, heldBytes)
    }

    func popFirst() -> VideoRenderer.Stage? {
        guard !stages.isEmpty else { return nil }
        let stage = stages.removeFirst()
        heldBytes -= bytes.removeFirst()
        if case .frame = stage { frames -= 1 }
        return stage
    }
}

/// The writer, opened on the encode thread once the GPU thread knows the first frame (it
/// queues the opening ahead of that frame), then used only there.
private final class WriterBox: @unchecked Sendable {
    private let lock = NSLock()
    private var opened: MediaWriter?
    private let totals = GPUTimeTotals()
    private var lookAheadBusy = (wall: 0.0, cpu: 0.0)
    var early: [(MediaPacket, Int)] = []

    /// The look-ahead thread's busy seconds (wall and CPU), set by the GPU thread as it ends.
    var lookAheadBusySeconds: (wall: Double, cpu: Double) {
        get { lock.withLock { lookAheadBusy } }
        set { lock.withLock { lookAheadBusy = newValue } }
    }

    var writer: MediaWriter? { lock.withLock { opened } }
    var timings: [String: Double] { totals.milliseconds }
    func open(_ writer: MediaWriter) { lock.withLock { opened = writer } }
    /// Adds a frame's GPU time per section (from the GPU or the look-ahead thread).
    func add(_ timings: GPUTimings) { totals.add(timings) }
}
