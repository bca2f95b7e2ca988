import VelvetBeauty
import VelvetFace
import VelvetGPU
import VelvetMedia

/// The beauty pipeline as a render effect: track the faces of each frame, run the skin
/// stages through their mask, grade colour, and report the region that changed.
public final class BeautyEffect: FrameEffect, @unchecked Sendable {
    public let context: GPUContext
    public let options: BeautyOptions
    /// Faces seen in each frame, in order (for the render summary; a lost face the tracker
    /// still holds, fading out, is not counted).
    public private(set) var facesPerFrame: [Int] = []
    /// GPU milliseconds per stage, summed over frames (tracker included).
    public private(set) var stageMilliseconds: [String: Double] = [:]
    /// The last frame's tracking result (its mask images are overwritten by the next frame).
    public private(set) var lastTracking: FaceTrackerResult?
    /// With `options.measuresQuality`: what the output achieved on each face, by track ID,
    /// one entry per frame the face was treated in (complete after `finishMeasuring()`).
    public private(set) var skinQuality: [Int: [FaceSkinQuality]] = [:]
    /// The last frame's measurement, read once its submission has completed (the next
    /// frame's, or `finishMeasuring`), with the track ID of each face.
    private var pendingQuality: (measurement: PendingSkinQuality, tracks: [Face])?

    private var tracker: FaceTracker?
    private var lookAheadTracker: LookAheadTracker?
    private let skin: SkinPipeline
    private let grading: ColorGrading?
    private let makeup: MakeupPipeline
    private let reshape: ReshapeStage
    /// Ping-pong targets for the stages after the skin (each reads one image, writes another).
    private var stageImages: [GPUImage] = []
    private lazy var overlay = try? FaceOverlay(context: context)
    private lazy var skinDebugView = try? SkinDebugView(context: context)
    /// The skin result the colour grade reads (it writes the frame's output).
    private var gradeSource: GPUImage?
    /// Track file, user's matte, matte output (docs/CLI.md, render).
    private let sidecars: RenderSidecars
    private let matteRecording: MatteRecording?
    private let zoneRecording: MatteRecording?
    private let zoneMap: ZoneMap?
    private let userMatte: UserMatte?
    private let matteComposite: MatteComposite?

    public init(context: GPUContext, options: BeautyOptions, sidecars: RenderSidecars = RenderSidecars()) throws {
        self.context = context
        self.options = options
        self.sidecars = sidecars
        matteRecording = sidecars.matteOut.map { MatteRecording(open: $0) }
        zoneRecording = sidecars.zonesOut.map { MatteRecording(open: $0) }
        zoneMap = sidecars.zonesOut == nil ? nil : try ZoneMap(context: context)
        userMatte = sidecars.matteIn.map(UserMatte.init)
        matteComposite = sidecars.matteIn == nil ? nil : try MatteComposite(context: context)
        _ = try options.skin.validated()
        skin = try SkinPipeline(context: context)
        // The LUT through the skin mask, the mask debug view and the matte output need the blend weight.
        skin.capturesWeights = options.grade?.throughSkinMask == true || options.debugView == .mask || sidecars.matteOut != nil
        skin.measuresQuality = options.measuresQuality
        grading = try options.grade.map { try ColorGrading(context: context, lut: $0.lut) }
        makeup = try MakeupPipeline(context: context)
        reshape = try ReshapeStage(context: context)
    }

    public var minimumFrameSide: Int { FaceTracker.minimumFrameSide }
    /// The skin stages' full-frame masks and intermediates, measured (docs/RELIABILITY.md, Memory),
    /// and the tracker's copy of the last frame (rgba16f) that repeats are found against.
    public var workingBytesPerPixel: Int { 24 + 8 }
    /// A track file holds the faces already: no look-ahead then.
    public var lookAhead: Int { sidecars.tracks == nil ? options.lookAhead : 0 }

    public func look(ahead frame: EffectFrame) throws {
        let tracker = try lookAheadTracker ?? makeLookAheadTracker()
        try tracker.analyze(frame.input, time: frame.time)
        add(tracker.lastTimings)
    }

    public func record(_ frame: EffectFrame, on recorder: CommandRecorder) throws -> FrameChange {
        finishMeasuring() // the frame before has completed on the GPU
        try matteRecording?.flush()
        try zoneRecording?.flush()
        let tracked: FaceTrackerResult
        if let playback = sidecars.tracks {
            tracked = try playback.process(frame.input, index: frame.index, path: sidecars.tracksPath)
            add(playback.lastTimings)
        } else if let lookAheadTracker {
            tracked = try lookAheadTracker.result(for: frame.input, index: frame.index)
            add(lookAheadTracker.lastTimings)
        } else {
            let tracker = try self.tracker ?? makeTracker(still: frame.isStillImage)
            tracked = try tracker.process(frame.input, time: frame.isStillImage ? nil : frame.time)
            add(tracker.lastTimings)
        }
        facesPerFrame.append(tracked.faces.filter { $0.missedFrames == 0 }.count)
        lastTracking = tracked
        let faces = try tracked.faces.map { try BeautyFace(landmarks: $0.points, weight: $0.weight) }

        if options.debugView == .landmarks {
            try overlay?.record(on: recorder, input: frame.input, output: frame.output, faces: tracked.faces,
                                mask: tracked.personMask)
            return .whole
        }
        let matte = try userMatte?.image(for: frame, on: recorder)
        let result = try skin.record(on: recorder, image: frame.input, faces: faces, personMask: tracked.personMask,
                                     settings: options.skin, destination: frame.output, userMatte: matte)
        if let matteRecording, let weights = result.weights { try matteRecording.record(weights: weights, time: frame.time, on: recorder) }
        if let zoneRecording, let zoneMap {
            try zoneRecording.record(weights: try zoneMap.record(on: recorder, mask: result.mask, frame: frame.input), time: frame.time,
                                     on: recorder)
        }
        if let quality = result.quality { pendingQuality = (quality, tracked.faces) }
        switch options.debugView {
        case .mask:
            guard let weights = result.weights else { return .none }
            overlay?.recordMask(on: recorder, mask: weights, output: frame.output)
            return .whole
        case .zones, .spots:
            // No face: the frame as it is (the skin stages wrote an exact copy).
            guard let map = options.debugView == .zones ? result.mask : result.spots else { return .none }
            skinDebugView?.record(on: recorder, mode: options.debugView == .zones ? .zones : .spots,
                                  frame: frame.input, map: map, output: frame.output)
            return .whole
        case .landmarks, nil:
            break
        }
        let wholeFrame = PixelRegion(x: 0, y: 0, width: frame.output.width, height: frame.output.height)
        // The global sharpen touches every pixel, not just the skin region.
        var changed: PixelRegion? = options.skin.sharpen > 0 ? wholeFrame : (result.region.isEmpty ? nil : result.region)
        if let grade = options.grade, let grading, grade.strength > 0, changed != nil || !grade.throughSkinMask {
            let source = try gradeSourceImage(like: frame.output)
            recorder.beginSection("grade")
            try recorder.copy(result.output, to: source)
            try grading.record(on: recorder, source: source, destination: frame.output,
                               mask: grade.throughSkinMask ? result.weights : nil, strength: grade.strength)
            recorder.endSection()
            if !grade.throughSkinMask { changed = wholeFrame }
        }
        // Makeup, then reshape last (it moves what the earlier stages painted), as in the
        // seed pipeline. Each reads the previous result and writes the other image.
        var current = frame.output
        for stage in [Stage.makeup, .reshape] where !stage.isIdentity(options) {
            let target = try stageImage(like: frame.output, avoiding: current)
            let region = stage == .makeup
                ? try makeup.record(on: recorder, image: current, faces: faces, settings: options.makeup, destination: target)
                : try reshape.record(on: recorder, image: current, faces: faces, settings: options.reshape, destination: target)
            current = target
            if !region.isEmpty { changed = changed.map { $0.union(region) } ?? region }
        }
        recorder.endSection()
        if current !== frame.output {
            if let matte, let matteComposite {
                matteComposite.record(on: recorder, staged: current, matte: matte, into: frame.output)
            } else {
                try recorder.copy(current, to: frame.output)
            }
        }
        guard let changed else { return .none }
        return .region(changed)
    }

    /// Files the last frame's measurement under its faces' track IDs; call once the GPU work
    /// recorded for it has completed.
    public func finishMeasuring() {
        guard let (measurement, tracks) = pendingQuality else { return }
        pendingQuality = nil
        for figures in measurement.resolve() {
            guard let track = tracks.first(where: { $0.points == figures.face.landmarks }) else { continue }
            skinQuality[track.trackID, default: []].append(figures)
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

    private enum Stage {
        case makeup, reshape
        func isIdentity(_ options: BeautyOptions) -> Bool {
            self == .makeup ? options.makeup.isIdentity : options.reshape.isIdentity
        }
    }

    /// A frame-sized image that is not `busy`.
    private func stageImage(like image: GPUImage, avoiding busy: GPUImage) throws -> GPUImage {
        if stageImages.first?.width != image.width || stageImages.first?.height != image.height {
            stageImages = try (0..<2).map { _ in
                try GPUImage(context: context, width: image.width, height: image.height, format: image.format)
            }
        }
        return stageImages[0] !== busy ? stageImages[0] : stageImages[1]
    }

    private func gradeSourceImage(like image: GPUImage) throws -> GPUImage {
        if let gradeSource, gradeSource.width == image.width, gradeSource.height == image.height { return gradeSource }
        let made = try GPUImage(context: context, width: image.width, height: image.height, format: image.format)
        gradeSource = made
        return made
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

    private func add(_ timings: GPUTimings) {
        for section in timings.sections { stageMilliseconds[section.label, default: 0] += section.milliseconds }
    }
}
