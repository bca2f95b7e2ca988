import CFFmpeg
import VelvetGPU

/// The GPU part of one frame: upload the decoded planes, convert to the working image,
/// run the effects, convert back to the output planes, download. Resources are created
/// for the first frame and reused for every later one.
final class FrameProcessor: @unchecked Sendable {
    struct Plan {
        var inputLayout: VideoPlaneLayout
        var outputLayout: VideoPlaneLayout
        /// What the encoder takes; swscale converts `outputLayout` to it when they differ.
        var encoderPixelFormat: AVPixelFormat
        var inputColor: ColorDescription
        var outputColor: ColorDescription
        /// Stored input -> upright working image.
        var inputOrientation: Orientation
        /// How the output is stored relative to the upright image: the input's orientation
        /// (videos keep their display matrix) or identity (stills are written upright).
        var outputOrientation: Orientation
        var storedWidth: Int
        var storedHeight: Int

        var uprightSize: (width: Int, height: Int) { inputOrientation.uprightSize(width: storedWidth, height: storedHeight) }
        var outputSize: (width: Int, height: Int) {
            outputOrientation == inputOrientation ? (storedWidth, storedHeight) : uprightSize
        }
        /// Apply only the effects' change to the original planes (bit-exact where untouched).
        var usesDelta: Bool {
            inputLayout == outputLayout && inputColor == outputColor && inputOrientation == outputOrientation
        }
    }

    let plan: Plan
    /// Unchanged frames are converted back too, not handed to the encoder as decoded
    /// (`RenderOptions.forcesGPURoundTrip`).
    private let forcesRoundTrip: Bool
    private let context: GPUContext
    private let converter: ColorConverter
    /// The planes a frame not shown to the look-ahead is uploaded into (made at its first
    /// use: with a look-ahead every frame comes in the look-ahead's plane sets).
    private var uploadPlanes: [GPUImage]?
    private let working: GPUImage
    private let processed: GPUImage
    private let outputPlanes: [GPUImage]
    /// Frames shown to the look-ahead beyond the K that frame N needs when it is recorded: the
    /// look-ahead thread has this many frames' time to track each one, so neither thread waits
    /// on the other's every round trip.
    static let lookAheadLead = 2
    /// The look-ahead's working images, taken in turn: one per frame whose look-ahead may still
    /// be running or queued (`lookAheadLead`), plus the frame before the oldest of them (read as
    /// its `previousInput`) and the frame being shown.
    private var lookAheadWorking: [GPUImage] = []
    static let lookAheadSets = lookAheadLead + 2
    /// How many it keeps: where it keeps images (a CPU device), one per plane set as well, and a
    /// frame's render reads the look-ahead's image of it instead of converting its planes again
    /// (the conversion is about 10 ms of a 720p frame on lavapipe, 0.05 on the H200), at 8
    /// bytes a pixel each.
    private let lookAheadImageSets: Int
    private var rendersFromLookAheadImages: Bool { lookAheadImageSets > Self.lookAheadSets }
    /// The input planes of every frame shown to the look-ahead and not yet rendered, taken in
    /// turn: the frame's render reads them instead of uploading the frame again.
    private var lookAheadPlanes: [[GPUImage]] = []
    private let lookAheadPlaneSets: Int
    /// Frames shown to the look-ahead so far.
    private var shown = 0
    /// Working images of later frames an effect asked for (`EffectFrame.upcoming`, where the
    /// look-ahead keeps none), by frame index, with their conversion's submission, used as the
    /// frame's own when it is recorded; and those free again (a frame's, once its recording is
    /// done).
    private var earlyWorking: [Int: (image: GPUImage, conversion: GPUSubmission)] = [:]
    private var freeEarlyWorking: [GPUImage] = []
    private var lookAheadWorker: LookAheadWorker?

    /// Input plane sets a look-ahead of K frames keeps, with F frames in flight: frames up to
    /// N + K + L are shown while frame N is recorded and frames N - F + 1 ... N are unfinished,
    /// and the frame being shown needs one more.
    static func lookAheadPlaneSets(lookAhead: Int, framesInFlight: Int) -> Int {
        lookAhead + lookAheadLead + framesInFlight + 1
    }

    /// Whether the look-ahead keeps a working image per plane set on a device of `kind`.
    static func keepsLookAheadImages(on kind: GPUDeviceInfo.Kind) -> Bool { kind == .cpu }

    /// The look-ahead's working images (`lookAheadImageSets`).
    static func lookAheadImageSets(lookAhead: Int, framesInFlight: Int, keepsImages: Bool) -> Int {
        keepsImages ? max(lookAheadSets, lookAheadPlaneSets(lookAhead: lookAhead, framesInFlight: framesInFlight)) : lookAheadSets
    }

    /// The frames kept in flight for `effect` with a look-ahead: what it takes, 1 to 2.
    static func framesInFlight(for effect: FrameEffect?) -> Int { min(max(effect?.framesInFlight ?? 1, 1), 2) }
    private(set) var lastTimings = GPUTimings(sections: [])

    /// A frame submitted to the GPU and not yet waited for (`begin`, then `finish`).
    struct Pending {
        fileprivate let frame: MediaFrame
        fileprivate let index: Int
        fileprivate let effect: FrameEffect?
        fileprivate let upload: GPUSubmission?
        /// The frame's conversion, where it was converted early for an effect (`EffectFrame.upcoming`).
        fileprivate let earlyConversion: GPUSubmission?
        fileprivate let submission: GPUSubmission
        /// nil: nothing changed, the decoded frame goes to the encoder as it is.
        fileprivate let readbacks: [GPUReadback]?
    }

    /// - Parameters:
    ///   - lookAhead, framesInFlight: the effect's look-ahead K (0: none) and frames in flight,
    ///     which size the look-ahead's plane sets.
    init(context: GPUContext, converter: ColorConverter, plan: Plan, forcesRoundTrip: Bool = false, lookAhead: Int = 0,
         framesInFlight: Int = 1, keepsLookAheadImages: Bool = false) throws {
        precondition(plan.outputOrientation == plan.inputOrientation || plan.outputOrientation == .identity)
        self.context = context
        lookAheadPlaneSets = Self.lookAheadPlaneSets(lookAhead: lookAhead, framesInFlight: framesInFlight)
        lookAheadImageSets = Self.lookAheadImageSets(lookAhead: lookAhead, framesInFlight: framesInFlight, keepsImages: keepsLookAheadImages)
        self.converter = converter
        self.plan = plan
        self.forcesRoundTrip = forcesRoundTrip
        let upright = plan.uprightSize
        working = try GPUImage(context: context, width: upright.width, height: upright.height, format: .rgba16f)
        processed = try GPUImage(context: context, width: upright.width, height: upright.height, format: .rgba16f)
        let output = plan.outputSize
        outputPlanes = try converter.makePlanes(plan.outputLayout, width: output.width, height: output.height)
        try converter.prepare(input: plan.inputLayout, output: plan.outputLayout, outputColor: plan.outputColor, delta: plan.usesDelta)
    }

    /// Shows one frame to the effect's look-ahead: upload and conversion to a working image
    /// here, then `look(ahead:)` on the look-ahead thread (`LookAheadWorker`), behind the frames
    /// before; `onTimings` gets the upload's GPU time from there. The uploaded planes are kept
    /// for the frame's render (`begin` converts them again, it does not upload). `index` counts
    /// the frames shown, from 0, one by one, in the order they are rendered.
    func lookAhead(_ frame: MediaFrame, index: Int, time: Double, effect: FrameEffect,
                   onTimings: @escaping @Sendable (GPUTimings) -> Void) throws {
        let worker = lookAheadWorker ?? LookAheadWorker()
        lookAheadWorker = worker
        // The set of `lookAheadImageSets` frames back is free once the look-ahead of the frame
        // after it (which read it as its previous frame) has run.
        try worker.wait(untilDone: index - lookAheadImageSets + 2)
        precondition(index == shown, "frames are shown to the look-ahead one by one")
        if lookAheadWorking.count < lookAheadImageSets {
            let upright = plan.uprightSize
            lookAheadWorking.append(try GPUImage(context: context, width: upright.width, height: upright.height, format: .rgba16f))
        }
        if lookAheadPlanes.count < lookAheadPlaneSets {
            lookAheadPlanes.append(try converter.makePlanes(plan.inputLayout, width: plan.storedWidth, height: plan.storedHeight))
        }
        let planes = lookAheadPlanes[index % lookAheadPlaneSets], working = lookAheadWorking[index % lookAheadImageSets]
        let previous = index > 0 ? lookAheadWorking[(index - 1) % lookAheadImageSets] : nil
        // On the look-ahead's queue, ahead of the tracker's work there. The frame's render
        // reads these planes only after the look-ahead through it has completed.
        let recorder = try CommandRecorder(context: context, lane: .lookAhead)
        recorder.beginSection("lookahead.upload")
        try converter.recordUpload(of: frame, to: planes, on: recorder)
        recorder.beginSection("lookahead.color_in")
        try converter.recordToWorking(planes: planes, layout: plan.inputLayout, color: plan.inputColor,
                                  orientation: plan.inputOrientation, working: working, on: recorder)
        recorder.endSection()
        // Submitted, not waited for: the effect's own submissions run behind it. The effect
        // only reads the frame here (`look(ahead:)` writes no output).
        let upload = try recorder.submit()
        shown += 1
        let shownFrame = EffectFrame(index: index, time: time, isStillImage: false, input: working, output: working,
                                     previousInput: previous)
        worker.submit {
            try Trace.span("lookahead.track") { try effect.look(ahead: shownFrame) }
            onTimings(GPUTimings(sections: try upload.wait().sections))
        }
    }

    /// Blocks until the look-ahead has seen `count` frames; throws its error.
    func waitForLookAhead(frames count: Int) throws { try lookAheadWorker?.wait(untilDone: count) }

    /// Seconds the look-ahead thread was busy, in wall and in CPU time.
    var lookAheadBusySeconds: (wall: Double, cpu: Double) { lookAheadWorker?.busySeconds ?? (0, 0) }

    /// Stops the look-ahead thread once its job under way is done (call before the render ends).
    func closeLookAhead() { lookAheadWorker?.close() }

    /// Runs one frame through the GPU; returns the output frame (pts copied).
    func process(_ frame: MediaFrame, index: Int, time: Double, isStillImage: Bool, effect: FrameEffect?) throws -> MediaFrame {
        try finish(begin(frame, index: index, time: time, isStillImage: isStillImage, effect: effect))
    }

    /// Records and submits one frame; `finish` waits for it. The next `begin` may come first,
    /// as far as the effect's `framesInFlight` allows: every recorder starts behind the work
    /// submitted before it, so the images are reused in order on the GPU, and each frame's
    /// staging and readbacks are its recorder's own.
    func begin(_ frame: MediaFrame, index: Int, time: Double, isStillImage: Bool, effect: FrameEffect?) throws -> Pending {
        var recorder = try CommandRecorder(context: context)
        // A frame the look-ahead was shown is on the GPU already, in its plane set (kept until
        // the frame has finished: `lookAheadPlaneSets`), and on a CPU device in the
        // look-ahead's working image too; any other is uploaded.
        let inputPlanes: [GPUImage]
        var working = self.working
        let wasShown = lookAheadWorker != nil && index < shown && index >= shown - lookAheadPlaneSets
        if wasShown {
            inputPlanes = lookAheadPlanes[index % lookAheadPlaneSets]
        } else {
            inputPlanes = try uploadPlanes ?? converter.makePlanes(plan.inputLayout, width: plan.storedWidth, height: plan.storedHeight)
            uploadPlanes = inputPlanes
            recorder.beginSection("upload")
            try converter.recordUpload(of: frame, to: inputPlanes, on: recorder)
        }
        let earlyEntry = earlyWorking.removeValue(forKey: index)
        let early = earlyEntry?.image
        if wasShown && rendersFromLookAheadImages {
            working = lookAheadWorking[index % lookAheadImageSets]
        } else if let early {
            working = early
        } else {
            recorder.beginSection("color_in")
            try converter.recordToWorking(planes: inputPlanes, layout: plan.inputLayout, color: plan.inputColor,
                                      orientation: plan.inputOrientation, working: working, on: recorder)
        }
        var change = FrameChange.none
        var upload: GPUSubmission?
        if let effect {
            // Effects record on a recorder of their own (a tracker submits and reads results
            // back between its passes). The upload is submitted, not waited for: every
            // recorder starts after the work queued before it, so the effect's first
            // submission runs behind it and the CPU does not stall here.
            recorder.endSection()
            upload = try recorder.submit()
            recorder = try CommandRecorder(context: context)
            var effectFrame = EffectFrame(index: index, time: time, isStillImage: isStillImage, input: working, output: processed)
            if wasShown { effectFrame.upcoming = { [unowned self] in try self.upcomingImage(of: $0, after: index) } }
            change = try Trace.span("effect.record") { try effect.record(effectFrame, on: recorder) }
        }
        // Free for a later frame's early conversion, on a later recorder (behind this one on the GPU).
        if let early { freeEarlyWorking.append(early) }
        if plan.usesDelta, change == .none, !forcesRoundTrip {
            // Nothing changed: the decoded frame itself goes to the encoder, bit-exact.
            recorder.endSection()
            return Pending(frame: frame, index: index, effect: effect, upload: upload, earlyConversion: earlyEntry?.conversion,
                           submission: try recorder.submit(), readbacks: nil)
        }
        recorder.beginSection("color_out")
        // An unchanged frame (a forced round trip, or a plan without delta) converts back whole
        // from the working image.
        let (result, converted) = change == .none ? (working, FrameChange.whole) : (processed, change)
        if plan.usesDelta {
            var region: PixelRegion?
            if case .region(let changed) = converted {
                region = changed.clamped(width: working.width, height: working.height)
                for (input, output) in zip(inputPlanes, outputPlanes) { try recorder.copy(input, to: output) }
            }
            if region != nil || converted == .whole {
                try converter.recordToPlanes(processed: result, original: (working, inputPlanes), output: outputPlanes,
                                         layout: plan.outputLayout, color: plan.outputColor,
                                         orientation: plan.outputOrientation, region: region, on: recorder)
            }
        } else {
            try converter.recordToPlanes(processed: result, original: nil, output: outputPlanes,
                                     layout: plan.outputLayout, color: plan.outputColor,
                                     orientation: plan.outputOrientation, on: recorder)
        }
        recorder.beginSection("download")
        // Downloaded in FFmpeg's layout: the encoder reads the staging memory itself.
        let readbacks = try outputPlanes.map {
            try recorder.download($0, rowPitch: MediaFrame.linesize(for: $0), trailingBytes: MediaFrame.planePadding)
        }
        recorder.endSection()
        return Pending(frame: frame, index: index, effect: effect, upload: upload, earlyConversion: earlyEntry?.conversion,
                       submission: try recorder.submit(), readbacks: readbacks)
    }

    /// The working image of frame `index`, a frame after `current` that the look-ahead was
    /// shown and whose planes are still kept (`EffectFrame.upcoming`). A conversion is submitted
    /// at once (not waited for), so that whatever is recorded or submitted after it reads the
    /// image converted; its GPU time joins the frame's `color_in`.
    private func upcomingImage(of index: Int, after current: Int) throws -> GPUImage? {
        guard index > current, index < shown, index >= shown - lookAheadPlaneSets else { return nil }
        if rendersFromLookAheadImages { return lookAheadWorking[index % lookAheadImageSets] }
        if let early = earlyWorking[index] { return early.image }
        let image = try freeEarlyWorking.popLast() ?? GPUImage(context: context, width: working.width, height: working.height,
                                                                format: working.format)
        let recorder = try CommandRecorder(context: context)
        recorder.beginSection("color_in")
        try converter.recordToWorking(planes: lookAheadPlanes[index % lookAheadPlaneSets], layout: plan.inputLayout,
                                      color: plan.inputColor, orientation: plan.inputOrientation, working: image, on: recorder)
        recorder.endSection()
        earlyWorking[index] = (image, try recorder.submit())
        return image
    }

    /// Waits for a frame `begin` submitted (frames in the order begun), tells the effect it
    /// completed, and returns the output frame (pts copied).
    func finish(_ pending: Pending) throws -> MediaFrame {
        let sections = try pending.submission.wait().sections
        lastTimings = GPUTimings(sections: (try pending.earlyConversion?.wait().sections ?? []) + (try pending.upload?.wait().sections ?? [])
                                 + sections)
        try Trace.span("effect.completed") { try pending.effect?.completed(frame: pending.index) }
        guard let readbacks = pending.readbacks else {
            pending.frame.pointer.pointee.pts = pending.frame.timestamp
            return pending.frame
        }
        let output = try MediaFrame(wrapping: readbacks, planes: outputPlanes, format: plan.outputLayout.pixelFormat)
        output.copyTiming(from: pending.frame)
        return output
    }
}
