import VelvetBeauty
import VelvetFace
import VelvetGPU
import VelvetMedia

/// The beauty pipeline as a render effect: track the faces of each frame, run the stage
/// chain (skin, sharpen, grade, makeup, reshape, or a debug view) and report the region
/// that changed.
public final class BeautyEffect: FrameEffect, @unchecked Sendable {
    public let context: GPUContext
    public let options: BeautyOptions
    /// Faces seen in each frame, in order (for the render summary; a lost face the tracker
    /// still holds, fading out, is not counted).
    public private(set) var facesPerFrame: [Int] = []
    /// GPU milliseconds per stage, summed over frames (tracker included).
    public var stageMilliseconds: [String: Double] { stageTotals.milliseconds }
    private let stageTotals = GPUTimeTotals()
    /// The last frame's tracking result (its mask images are overwritten by the next frame).
    public private(set) var lastTracking: FaceTrackerResult?
    /// With `options.measuresQuality`: what the output achieved on each face, by track ID,
    /// one entry per frame the face was treated in (complete after `finishMeasuring()`).
    public private(set) var skinQuality: [Int: [FaceSkinQuality]] = [:]
    /// The measurements of the frames recorded and not yet completed, oldest first, read in
    /// `completed(frame:)` (or `finishMeasuring`), with the track ID of each face.
    private var pendingQuality: [(frame: Int, measurement: PendingSkinQuality, tracks: [Face])] = []

    private var tracker: FaceTracker?
    private var faceSelector: FaceSelector
    private var lookAheadTracker: LookAheadTracker?
    /// On a video file, the skin stages' fronts (mask, spots, smoothing, the strength fit's
    /// measurement) run this many frames ahead of the blend, so a frame's gains are averaged
    /// with those of the frames after it as well as before (`GainWindow`).
    public static let frontLead = 2
    /// The frames whose fronts were recorded ahead: their tracking and the faces selected.
    private var fronts = FrontSchedule<(tracked: FaceTrackerResult, selected: [Face])>()
    /// With a track file and the fronts ahead: each waiting front's person mask, taken in turn
    /// (the playback's own is overwritten by the next frame's, before the fronts' work runs).
    private var aheadPersonMasks: [GPUImage] = []
    private let passes: FacePasses
    /// Track file, user's matte, matte output (docs/CLI.md, render).
    private let sidecars: RenderSidecars
    private let matteRecording: MatteRecording?
    private let zoneRecording: MatteRecording?
    private let zoneMap: ZoneMap?
    private let userMatte: UserMatte?

    public init(context: GPUContext, options: BeautyOptions, sidecars: RenderSidecars = RenderSidecars()) throws {
        self.context = context
        self.options = options
        self.sidecars = sidecars
        faceSelector = FaceSelector(options.faces)
        matteRecording = sidecars.matteOut.map { MatteRecording(open: $0) }
        zoneRecording = sidecars.zonesOut.map { MatteRecording(open: $0) }
        zoneMap = sidecars.zonesOut == nil ? nil : try ZoneMap(context: context)
        userMatte = sidecars.matteIn.map(UserMatte.init)
        passes = try FacePasses(context: context, options: options, sidecars: sidecars)
    }

    /// The chain's stages in order; the chain leaves out the idle ones. A new stage is one
    /// line here. `capturesWeights`: the skin stage keeps its blend weight whatever needs it.
    static func stages(options: BeautyOptions, sidecars: RenderSidecars, context: GPUContext,
                       capturesWeights: Bool = false) throws -> [any BeautyStage] {
        if options.debugView == .landmarks { return [try DebugViewStage(context: context, view: .landmarks)] }
        if options.debugView == .teeth { return [try TeethStage(context: context, settings: options.teeth, showsMask: true)] }
        if options.debugView == .eyes { return [try EyeBrightenStage(context: context, settings: options.eyeBrighten, showsMask: true)] }
        if options.debugView == .underEye { return [try UnderEyeStage(context: context, settings: options.underEye, showsMask: true)] }
        if options.debugView == .shine { return [try ShineStage(context: context, settings: options.shine, showsMask: true)] }
        let skin = try SkinPipeline(context: context)
        // The LUT through the skin mask, the mask debug view and the matte output need the blend weight.
        skin.capturesWeights = capturesWeights || options.grade?.throughSkinMask == true || options.debugView == .mask
            || sidecars.matteOut != nil
        skin.showsMaps = options.debugView.map { [.mask, .zones, .spots].contains($0) } ?? false
        let skinStage = try SkinStage(pipeline: skin, settings: options.skin)
        if let view = options.debugView { return [skinStage, try DebugViewStage(context: context, view: view)] }
        var stages: [any BeautyStage] = [skinStage, try SharpenStage(context: context, amount: options.skin.sharpen)]
        if options.measuresQuality { stages.append(SkinQualityStage(pipeline: skin)) }
        if let grade = options.grade {
            stages.append(GradeStage(grading: try ColorGrading(context: context, lut: grade.lut), strength: grade.strength,
                                     throughSkinMask: grade.throughSkinMask))
        }
        // Shine after the skin stages (it reads the smoothed, graded skin's own level) and before
        // makeup (blush is colour laid on the skin, not a level to measure or a peak to pull).
        stages.append(try ShineStage(context: context, settings: options.shine))
        stages.append(try TeethStage(context: context, settings: options.teeth))
        stages.append(try EyeBrightenStage(context: context, settings: options.eyeBrighten))
        // Under-eye after the skin stages and the grade (it lifts towards the cheek level as smoothed and graded), before makeup (blush would paint the cheek band it measures).
        stages.append(try UnderEyeStage(context: context, settings: options.underEye))
        // Makeup, then reshape last (it moves what the earlier stages painted), as in the seed pipeline.
        stages.append(try MakeupStage(context: context, settings: options.makeup))
        stages.append(try ReshapeStage(context: context, settings: options.reshape))
        return stages
    }

    public var minimumFrameSide: Int { FaceTracker.minimumFrameSide }
    public var drawsInColour: Bool { options.debugView.map { $0 != .mask } ?? false }
    /// The skin stages' full-frame masks and intermediates, measured (docs/RELIABILITY.md, Memory),
    /// and the tracker's copy of the last frame (rgba16f) that repeats are found against; with
    /// per-face settings each pass has its own, and the image between the passes (rgba16f).
    public var workingBytesPerPixel: Int { passes.isSplit ? 2 * 24 + 8 + 8 : 24 + 8 }
    /// What the fronts recorded ahead keep (`FrontSchedule.bytesPerPixel`).
    public var lookAheadBytesPerPixel: Int { recordsFrontsAhead ? FrontSchedule<Void>.bytesPerPixel(skinStages: 1) : 0 }
    /// Frames the renderer holds ahead: the tracker's look-ahead (none with a track file, which
    /// holds the faces already), and `frontLead` more where the skin fronts run ahead, so that
    /// a frame's faces are final when its front is recorded.
    public var lookAhead: Int { trackerLookAhead + (recordsFrontsAhead ? Self.frontLead : 0) }
    /// The tracker's look-ahead K: 0 with a track file.
    public var trackerLookAhead: Int { sidecars.tracks == nil ? options.lookAhead : 0 }
    /// The fronts run ahead on a video rendered with the look-ahead, or from a track file
    /// (which then gives the look-ahead render's pixels), with one pass whose chain starts with
    /// the skin stage.
    private var recordsFrontsAhead: Bool { (sidecars.tracks != nil || options.lookAhead > 0) && passes.frontStage != nil }

    public func prepare(for input: EffectInput) throws {
        guard sidecars.tracks == nil else { return }
        if input.looksAhead {
            try (lookAheadTracker ?? makeLookAheadTracker()).prepare(width: input.uprightSize?.width, height: input.uprightSize?.height)
        } else {
            try (tracker ?? makeTracker(still: input.isStillImage)).prepare(width: input.uprightSize?.width, height: input.uprightSize?.height)
        }
    }

    public func look(ahead frame: EffectFrame) throws {
        // A track file has the faces: frames are held only for the skin fronts.
        guard sidecars.tracks == nil else { return }
        let tracker = try lookAheadTracker ?? makeLookAheadTracker()
        add(try tracker.analyze(frame.input, time: frame.time, previous: frame.trackerLastFrame))
    }

    /// Everything read back of a frame waits for `completed(frame:)`.
    public var framesInFlight: Int { 2 }
    public var warnings: [String] {
        [faceSelector.unmatchedWarning, matteRecording?.warning, zoneRecording?.warning].compactMap { $0 }
    }

    public func completed(frame index: Int) throws {
        lookAheadTracker?.completed(through: index)
        resolveQuality(through: index)
        try matteRecording?.flush(through: index)
        try zoneRecording?.flush(through: index)
    }

    public func record(_ frame: EffectFrame, on recorder: CommandRecorder) throws -> FrameChange {
        let tracked: FaceTrackerResult
        var selected: [Face]?
        if recordsFrontsAhead, let upcoming = frame.upcoming {
            (tracked, selected) = try recordFronts(for: frame, upcoming: upcoming, on: recorder)
        } else if let playback = sidecars.tracks {
            tracked = try playback.process(frame.input, index: frame.index, path: sidecars.tracksPath)
            add(playback.lastTimings)
        } else if let lookAheadTracker {
            tracked = try lookAheadTracker.result(index: frame.index)
        } else {
            let tracker = try self.tracker ?? makeTracker(still: frame.isStillImage)
            tracked = try tracker.process(frame.input, time: frame.isStillImage ? nil : frame.time)
            add(tracker.lastTimings)
        }
        facesPerFrame.append(tracked.faces.filter { $0.missedFrames == 0 }.count)
        lastTracking = tracked
        let (changed, stageFrames) = try passes.record(on: recorder, input: frame.input, faces: selected ?? faceSelector.select(tracked.faces),
                                                       trackedFaces: tracked.faces, personMask: tracked.personMask,
                                                       userMatte: try userMatte?.image(for: frame, on: recorder), output: frame.output)
        // The sidecars take one pass's weights: they are refused with per-face settings (SidecarArguments).
        if let skin = stageFrames.first?.skin {
            if let matteRecording, let weights = skin.weights { try matteRecording.record(weights: weights, frame: frame.index, time: frame.time, on: recorder) }
            if let zoneRecording, let zoneMap {
                try zoneRecording.record(weights: try zoneMap.record(on: recorder, mask: skin.mask, frame: frame.input), frame: frame.index,
                                         time: frame.time, on: recorder)
            }
        }
        pendingQuality += stageFrames.compactMap(\.quality).map { (frame.index, $0, tracked.faces) }
        guard let changed else { return .none }
        // A view replaces the picture: every pixel is converted back as it is, not as a change.
        return options.debugView != nil ? .whole : .region(changed)
    }

    /// Records the skin fronts of the frames through `frame`'s index + `frontLead` not yet
    /// recorded, each with its faces (from the track file or the look-ahead); returns `frame`'s
    /// own tracking and selected faces.
    private func recordFronts(for frame: EffectFrame, upcoming: EffectFrame.Upcoming,
                              on recorder: CommandRecorder) throws -> (FaceTrackerResult, [Face]) {
        guard let stage = passes.frontStage else { throw BeautyError.invalidSettings("no skin stage to record fronts on") }
        return try fronts.record(for: frame, upcoming: upcoming) { index, image in
            let tracked: FaceTrackerResult
            if let playback = sidecars.tracks {
                let slot = index % (Self.frontLead + 1)
                if aheadPersonMasks.count <= slot {
                    aheadPersonMasks.append(try playback.makePersonMask(width: image.width, height: image.height))
                }
                tracked = try playback.process(image, index: index, path: sidecars.tracksPath, personMask: aheadPersonMasks[slot])
                add(playback.lastTimings)
            } else {
                let tracker = try lookAheadTracker ?? makeLookAheadTracker()
                tracked = try tracker.result(index: index)
            }
            let selected = faceSelector.select(tracked.faces)
            try stage.recordFront(on: recorder, image: image, faces: FacePasses.beautyFaces(selected), personMask: tracked.personMask,
                                  lead: Self.frontLead)
            return (tracked, selected)
        }
    }

    /// Files every pending measurement under its faces' track IDs; call once the GPU work
    /// recorded has completed (the end of a render).
    public func finishMeasuring() { resolveQuality(through: Int.max) }

    private func resolveQuality(through index: Int) {
        let done = pendingQuality.prefix { $0.frame <= index }
        pendingQuality.removeFirst(done.count)
        for (_, measurement, tracks) in done {
            for figures in measurement.resolve() {
                guard let track = tracks.first(where: { $0.points == figures.face.landmarks }) else { continue }
                skinQuality[track.trackID, default: []].append(figures)
            }
        }
    }

    /// Writes the last frame's matte and moves the matte file into place, and checks that a
    /// track file had no frames the input lacks; call once the render's GPU work has completed
    /// (the CLI does it just before the output is moved into place).
    public func finishSidecars() throws {
        // The check first: a failed one must leave no matte behind either.
        try sidecars.tracks?.checkEveryFramePlayed(path: sidecars.tracksPath)
        try matteRecording?.finish()
        try zoneRecording?.finish()
    }

    private func makeTracker(still: Bool) throws -> FaceTracker {
        var trackerOptions: FaceTrackerOptions = still ? .still : .video
        trackerOptions.detector = options.detector
        trackerOptions.maxFaces = options.maxFaces
        let tracker = try FaceTracker(context: context, options: trackerOptions)
        self.tracker = tracker
        return tracker
    }

    private func makeLookAheadTracker() throws -> LookAheadTracker {
        var trackerOptions = FaceTrackerOptions.video
        trackerOptions.detector = options.detector
        trackerOptions.maxFaces = options.maxFaces
        let tracker = try LookAheadTracker(context: context, options: trackerOptions, lookAhead: options.lookAhead)
        lookAheadTracker = tracker
        return tracker
    }

    private func add(_ timings: GPUTimings) { stageTotals.add(timings) }
}

extension EffectFrame {
    /// Where a look-ahead tracker finds the frame before: the renderer's own image of it (no
    /// copy), or, from a caller that gives none after the first frame, a copy of its own.
    var trackerLastFrame: FaceTracker.LastFrame {
        if let previousInput { return .given(previousInput) }
        return index == 0 ? .given(nil) : .copied
    }
}
