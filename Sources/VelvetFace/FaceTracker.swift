import Foundation
import VelvetGPU
import VelvetNN

/// Which BlazeFace model finds faces.
public enum DetectorChoice: String, Sendable, CaseIterable {
    /// MediaPipe's short-range model on the whole frame (faces near the camera).
    case short
    /// MediaPipe's full-range model on the whole frame.
    case full
    /// Both models on the whole frame, the full-range model on tiles at higher scales for
    /// small faces, and the frame turned by quarter turns when nothing is found upright
    /// (`DetectionPolicy`).
    case auto
}

public struct FaceTrackerOptions: Sendable, Equatable {
    public var detector: DetectorChoice = .auto
    /// Most faces tracked at once: enough for a group photo.
    public var maxFaces = 32
    public static let maxFacesRange = 1...64
    /// Where `auto` looks for faces (tiles, rotations).
    public var policy = DetectionPolicy()
    /// false: every frame is a still (detection, then the mesh from each detection; no
    /// smoothing), as MediaPipe's static_image_mode.
    public var tracking = true
    /// While tracking, the detector also runs every this many frames to find new faces
    /// (when fewer than `maxFaces` are tracked); 0: only when no face is tracked or one was lost.
    public var detectionInterval = 10
    /// Segmentation runs every this many frames (the mask is reused in between); 0: off.
    public var segmentationInterval = 1
    public var segmentationModel: SegmentationModel = .auto
    /// Landmark filter while tracking; nil: raw landmarks.
    public var smoothing: LandmarkSmoothing? = .standard
    /// A face whose mesh presence falls below this is lost.
    public var minPresence: Float = 0.5
    /// While tracking, a lost face is held at its last landmarks for this many frames while
    /// the mesh and the detector look for it again (found: the same track, as if never lost),
    /// its weight falling 3/4, 1/2, 1/4 (a face that leaves fades out); 0: dropped at once.
    public var holdFrames = 3
    /// Detector score threshold; nil: MediaPipe's (0.5 short range, 0.6 full range).
    public var minDetectionScore: Float?
    /// While tracking, move each ROI on by the face's last frame-to-frame motion.
    public var predictsMotion = true
    /// Two faces whose ROIs overlap this much (IoU of their unrotated squares) are one face.
    public var sameFaceOverlap: Float = 0.5

    public init() {}

    /// Video: track from the previous landmarks, detect at a low cadence, smooth.
    public static var video: FaceTrackerOptions { FaceTrackerOptions() }

    /// Stills: detect every frame, no smoothing.
    public static var still: FaceTrackerOptions {
        var options = FaceTrackerOptions()
        options.tracking = false
        options.smoothing = nil
        return options
    }

    func validated() throws -> FaceTrackerOptions {
        guard Self.maxFacesRange.contains(maxFaces) else {
            throw FaceError.invalidArgument("maxFaces must be \(Self.maxFacesRange.lowerBound)...\(Self.maxFacesRange.upperBound), got \(maxFaces)")
        }
        guard detectionInterval >= 0, segmentationInterval >= 0 else {
            throw FaceError.invalidArgument("detection and segmentation intervals must be >= 0")
        }
        guard holdFrames >= 0 else { throw FaceError.invalidArgument("holdFrames must be >= 0") }
        guard (0...1).contains(minPresence), (0...1).contains(minDetectionScore ?? 0.5), (0...1).contains(sameFaceOverlap) else {
            throw FaceError.invalidArgument("presence, detection score and overlap thresholds must be in 0...1")
        }
        return self
    }
}

/// Finds and follows faces and segments the person, frame after frame, on the GPU.
///
/// Per frame while tracking: one submission runs the mesh of every tracked face (ROI from
/// its previous landmarks) and the segmentation, with the detector added at the detection
/// cadence; the landmarks (5.6 KB per face) come back to the CPU, where the next ROIs are
/// computed. A second submission runs only when the detector found a new face (its mesh),
/// and a detector pass is added in the frame a face is lost, so a face that leaves and
/// comes back is picked up at once.
///
/// The result's mask images belong to the tracker and are overwritten by the next frame.
public final class FaceTracker: @unchecked Sendable {
    public let context: GPUContext
    public let options: FaceTrackerOptions
    private let files: FaceModelFiles
    private let kernels: NNKernels
    /// The mesh model, loaded by `prepare` (beside the others) or at its first use.
    private var loadedMesh: FaceMeshModel?
    /// Each detector model's instances: a pass runs its views one per instance, side by side
    /// (`NNBatch`); a view beyond the last instance waits for an earlier one's outputs.
    private var detectors: [FaceDetectorModel: [FaceDetector]] = [:]
    private let merge: DetectionMerge
    private var segmenters: [SegmentationModel: PersonSegmenter] = [:]
    /// The frame size the last segmentation (`lastSegmenter`'s mask) was of, while it stands.
    private var maskFrameSize: (width: Int, height: Int)?
    private var lastSegmenter: PersonSegmenter?
    private let repeats: RegionRepeats

    private struct Track {
        var id: Int
        var raw: [SIMD3<Float>]
        var smoothed: [SIMD3<Float>]
        var presence: Float
        var smoother: LandmarkSmoother?
        /// The ROI of the frame before `raw`'s, for motion prediction.
        var previousROI: FaceROI?
        /// `raw` came from a detection's ROI: the change to the next frame's mesh (from a ROI
        /// of landmarks) is the ROI settling, not motion, and is not predicted on.
        var fromDetection = false
        /// Frames since the mesh last accepted the face (held while below `holdFrames`).
        var missed = 0
        var roi: FaceROI { FaceROI(landmarks: raw.map { SIMD2($0.x, $0.y) }) }
        var landmarkBox: FaceBox { FaceBox(bounding: raw.map { SIMD2($0.x, $0.y) }) }

        /// The ROI the mesh ran in last.
        var usedROI: FaceROI?

        /// Where to look in the next frame: the last ROI, moved on by its last change
        /// (constant velocity) when `predict` is on, since the mesh lands closest to the truth
        /// when the face sits in its ROI as in the frame the ROI came from. A ROI that would
        /// move less than the mesh's own noise keeps its place: the model then sees a still
        /// face at the same spot and its output stays still too.
        func nextROI(predict: Bool) -> FaceROI {
            let current = roi
            var next = current
            if predict, let previous = previousROI, previous.side > 0 {
                let growth = min(max(current.side / previous.side, 0.8), 1.25)
                let turn = min(max(FaceROI.normalised(current.rotation - previous.rotation), -0.3), 0.3)
                var shift = current.centre - previous.centre
                let length = (shift * shift).sum().squareRoot()
                if length > current.side * 0.25 { shift *= current.side * 0.25 / length }
                next = FaceROI(centre: current.centre + shift, side: current.side * growth,
                               rotation: FaceROI.normalised(current.rotation + turn))
            }
            if let used = usedROI, Self.isClose(next, used) { return used }
            return next
        }

        /// What a repeat of the frame must leave untouched for the face to keep its landmarks:
        /// the pixels its last mesh read (`usedROI`, rotated) and the skin stages' reach (1 IOD
        /// around the mesh, as metric M3).
        func repeatRegion(width: Int, height: Int) -> PixelRegion? {
            let points = raw.map { SIMD2($0.x, $0.y) }
            let box = FaceBox(bounding: points)
            let shift = points[33] - points[263]
            let iod = (shift * shift).sum().squareRoot()
            var low = SIMD2(box.x, box.y) - iod, high = SIMD2(box.x + box.width, box.y + box.height) + iod
            if let used = usedROI {
                let reach = used.side * 0.7072 // half the diagonal, whatever the rotation
                low = pointwiseMin(low, used.centre - reach)
                high = pointwiseMax(high, used.centre + reach)
            }
            guard low.x.isFinite, low.y.isFinite, high.x.isFinite, high.y.isFinite else { return nil }
            let x0 = max(0, Int(low.x.rounded(.down))), y0 = max(0, Int(low.y.rounded(.down)))
            let x1 = min(width, Int(high.x.rounded(.up))), y1 = min(height, Int(high.y.rounded(.up)))
            return x1 > x0 && y1 > y0 ? PixelRegion(x: x0, y: y0, width: x1 - x0, height: y1 - y0) : nil
        }

        /// Within the mesh's frame-to-frame noise on a still face (measured: ~0.4 % of IOD).
        static func isClose(_ a: FaceROI, _ b: FaceROI) -> Bool {
            let shift = a.centre - b.centre
            return (shift * shift).sum().squareRoot() < 0.01 * b.side && abs(a.side / b.side - 1) < 0.01
                && abs(FaceROI.normalised(a.rotation - b.rotation)) < 0.015
        }
    }

    private var tracks: [Track] = []
    /// Tracks lost in this frame: a detection of the same face takes over their ID and filter.
    private var lost: [Track] = []
    private var frameIndex = 0
    /// The next tile a video detection pass searches.
    private var tileCursor = 0
    private var nextID = 1
    /// GPU time per section of the last frame: "face.repeats"; the first submission's models,
    /// side by side, named by what ran ("face.detect+mesh+segment", "face.mesh", ...); then
    /// "face.detect" and "face.mesh" for faces searched and meshed afresh.
    public private(set) var lastTimings = GPUTimings()
    /// Whether the last frame was a cut (a new shot: tracking started afresh).
    public private(set) var lastFrameWasCut = false
    /// GPU submissions the last frame needed.
    public private(set) var lastSubmissionCount = 0
    /// The frame's model groups, recorded once and replayed every frame after.
    private let recordedGroups = NNRecordedGroups()

    public init(context: GPUContext, options: FaceTrackerOptions = .video, files: FaceModelFiles = .standard,
                kernels: NNKernels? = nil) throws {
        self.context = context
        self.options = try options.validated()
        self.files = files
        self.kernels = kernels ?? NNKernels(context: context)
        merge = try DetectionMerge(context: context)
        repeats = try RegionRepeats(context: context, capacity: FaceTrackerOptions.maxFacesRange.upperBound)
    }

    /// Forgets every tracked face (the next frame starts with detection).
    public func reset() {
        tracks.removeAll()
        frameIndex = 0
        maskFrameSize = nil
        repeats.reset()
    }

    /// Loads the models a first frame of `width` x `height` runs (the detectors, and the
    /// segmentation when this tracker segments; nil size: the detectors only), so that the
    /// first `process` does not: a render calls it while it opens its decoder and encoder.
    /// `segmentation`: whether frames are segmented (by default: when `segmentationInterval`
    /// says so; a caller that passes `process` a person mask says true).
    public func prepare(width: Int?, height: Int?, segmentation: Bool? = nil) throws {
        let models: [FaceDetectorModel] = switch options.detector {
        case .short: [.shortRange]
        case .full: [.fullRange]
        case .auto: [.shortRange, .fullRange]
        }
        let segmentationModel = (segmentation ?? (options.segmentationInterval > 0)) ? width.flatMap { width in
            height.map { options.segmentationModel.resolved(width: width, height: $0) }
        } : nil
        // The models are loaded side by side (parsing and planning each is CPU work of its own).
        let (context, files, kernels, threshold) = (context, files, kernels, options.minDetectionScore)
        var loads: [@Sendable () throws -> LoadedModel] = []
        if loadedMesh == nil { loads.append { .mesh(try FaceMeshModel(context: context, files: files, kernels: kernels)) } }
        for model in models where detectors[model] == nil {
            loads.append { .detector(model, try FaceDetector(context: context, model: model, files: files, kernels: kernels,
                                                             scoreThreshold: threshold)) }
        }
        if let segmentationModel, segmenters[segmentationModel] == nil {
            loads.append { .segmenter(segmentationModel, try PersonSegmenter(context: context, model: segmentationModel, files: files,
                                                                             kernels: kernels)) }
        }
        for loaded in try ConcurrentJobs.run(loads) {
            switch loaded {
            case .mesh(let mesh): loadedMesh = mesh
            case .detector(let model, let detector): detectors[model] = [detector]
            case .segmenter(let model, let segmenter): segmenters[model] = segmenter
            }
        }
        for model in models {
            for instance in 0..<instanceCount(model) { _ = try detector(model, instance: instance) }
        }
    }

    private enum LoadedModel: @unchecked Sendable {
        case mesh(FaceMeshModel)
        case detector(FaceDetectorModel, FaceDetector)
        case segmenter(SegmentationModel, PersonSegmenter)
    }

    /// The mesh model (loaded here when `prepare` did not).
    private var mesh: FaceMeshModel {
        get throws {
            if let loadedMesh { return loadedMesh }
            let mesh = try FaceMeshModel(context: context, files: files, kernels: kernels)
            loadedMesh = mesh
            return mesh
        }
    }

    /// An image for `process(personMask:)`: the person probability at the segmentation
    /// model's size for `width` x `height` frames.
    public func makePersonMask(width: Int, height: Int) throws -> GPUImage {
        try segmenter(for: width, height).makeLowResolutionMask()
    }

    /// Records `low` (a result's person mask) resized to `mask`'s size, bilinearly with pixel
    /// centres aligned: where the probability is needed per frame pixel (the M2 check).
    public func recordPersonMaskResize(_ low: GPUImage, into mask: GPUImage, on recorder: CommandRecorder) throws {
        try segmenter(for: mask.width, mask.height).recordResize(on: recorder, from: low, into: mask)
    }

    private func detector(_ model: FaceDetectorModel, instance: Int = 0) throws -> FaceDetector {
        var instances = detectors[model] ?? []
        while instances.count <= instance {
            instances.append(try instances.first?.twin()
                ?? FaceDetector(context: context, model: model, files: files, kernels: kernels,
                                scoreThreshold: options.minDetectionScore))
        }
        detectors[model] = instances
        return instances[instance]
    }

    /// Twins of `mesh`, made as more faces are tracked: face i's mesh runs on instance
    /// i mod `meshInstanceLimit`, side by side with the others (`NNBatch`).
    private var meshTwins: [FaceMeshModel] = []
    /// Mesh instances kept at most (each twin holds about 2.5 MB of GPU buffers).
    static let meshInstanceLimit = 8

    private func meshInstance(for face: Int) throws -> FaceMeshModel {
        let slot = face % Self.meshInstanceLimit
        guard slot > 0 else { return try mesh }
        while meshTwins.count < slot { meshTwins.append(try mesh.twin()) }
        return meshTwins[slot - 1]
    }

    /// Instances of `model` a pass runs side by side: for the full-range detector, one for the
    /// whole frame and one per tile of a video pass (a still's passes take more tiles, in turns).
    private func instanceCount(_ model: FaceDetectorModel) -> Int {
        model == .fullRange && options.detector == .auto ? options.policy.tilesPerVideoPass + 1 : 1
    }

    /// The detectors of a pass's views: a model's n-th view on its instance n mod the count.
    private func detectors(for runs: [(FaceDetectorModel, DetectionView)]) throws -> [(FaceDetector, DetectionView)] {
        var seen: [FaceDetectorModel: Int] = [:]
        return try runs.map { model, view in
            let n = seen[model, default: 0]
            seen[model] = n + 1
            return (try detector(model, instance: n % instanceCount(model)), view)
        }
    }

    private func segmenter(for image: GPUImage) throws -> PersonSegmenter {
        try segmenter(for: image.width, image.height)
    }

    private func segmenter(for width: Int, _ height: Int) throws -> PersonSegmenter {
        let model = options.segmentationModel.resolved(width: width, height: height)
        if let segmenter = segmenters[model] { return segmenter }
        let segmenter = try PersonSegmenter(context: context, model: model, files: files, kernels: kernels)
        segmenters[model] = segmenter
        return segmenter
    }

    /// The smallest frame side tracked. A guard from the tracker's first version rather than a
    /// limit of the kernels (with it lifted, a 2x2 frame tracks cleanly under validation), kept
    /// because no face is detectable below it: renders with effects refuse smaller frames
    /// before decoding, naming it (docs/CLI.md).
    public static let minimumFrameSide = 16

    /// Where the repeat check reads the last frame from.
    public enum LastFrame {
        /// A copy the tracker keeps (8 bytes a pixel, copied every frame).
        case copied
        /// The caller's image of the frame processed last (nil: there was none), intact
        /// until `process` returns; nothing is copied.
        case given(GPUImage?)
    }

    /// Processes one frame (an upright working image whose GPU writes have completed).
    /// - Parameters:
    ///   - time: presentation time in seconds (for the landmark filter); frames are taken to
    ///     be 1/30 s apart when nil.
    ///   - last: where the last frame is compared from (the look-ahead keeps its frames).
    ///   - personMask: when given (from `makePersonMask`), the frame's person probability at
    ///     the model's size is written there, side by side with the meshes, whatever
    ///     `segmentationInterval` says (the look-ahead keeps one per frame).
    public func process(_ image: GPUImage, time: Double? = nil, last: LastFrame = .copied,
                        personMask: GPUImage? = nil) throws -> FaceTrackerResult {
        guard image.width >= Self.minimumFrameSide, image.height >= Self.minimumFrameSide else {
            throw FaceError.invalidArgument("frames must be at least \(Self.minimumFrameSide)x\(Self.minimumFrameSide) pixels, got \(image.width)x\(image.height)")
        }
        let time = time ?? Double(frameIndex) / 30
        var timings: [(label: String, milliseconds: Double)] = []
        var submissions = 0
        func submit(_ recorder: CommandRecorder) throws {
            timings += try recorder.submit().wait().sections
            submissions += 1
        }

        if !options.tracking { tracks.removeAll() }
        if let size = maskFrameSize, size != (image.width, image.height) { maskFrameSize = nil }
        let segmentNow = options.segmentationInterval > 0
            && (maskFrameSize == nil || frameIndex % options.segmentationInterval == 0)
        // Every still frame, and every `detectionInterval`-th video frame, is a full search
        // (tiles, rotations); in between the detector runs when no face is tracked.
        let fullSearch = !options.tracking || (options.detectionInterval > 0 && frameIndex % options.detectionInterval == 0)
        let detectNow = tracks.isEmpty || (fullSearch && tracks.count < options.maxFaces)

        // Submission 1: the repeat check, then the detectors when due, the tracked meshes and
        // the segmentation, side by side (`NNBatch`).
        let recorder = try CommandRecorder(context: context)
        let before = tracks
        var repeatCheck: RegionRepeats.Pending?
        if options.tracking {
            recorder.beginSection("face.repeats")
            repeatCheck = try repeats.record(on: recorder, image: image, last: last,
                                             regions: tracks.map { $0.repeatRegion(width: image.width, height: image.height) })
        }
        let models = NNBatch()
        var ran: [String] = []
        var detectionLists: DetectionMerge.Lists?
        // Tiles look for faces of the policy's minimum size and up: anything smaller one finds
        // is at the models' reach, likelier a pattern (a 13-px "face" on a coat's hem) than a face.
        var uprightMinimumSide: Float = 0
        if detectNow {
            let views = uprightViews(for: image, fullSearch: fullSearch)
            if views.contains(where: { $0.1.isTile(width: image.width, height: image.height) }) {
                uprightMinimumSide = options.policy.minimumFaceSize
            }
            detectionLists = try merge.add(try detectors(for: views), of: image, to: models, on: recorder)
            ran.append("detect")
        }
        for index in tracks.indices { tracks[index].usedROI = tracks[index].nextROI(predict: options.predictsMotion) }
        var pendingMeshes = [FaceMeshModel.Pending?](repeating: nil, count: tracks.count)
        for (index, track) in tracks.enumerated() {
            try meshInstance(for: index).add(to: models, image: image, roi: track.usedROI!) { pendingMeshes[index] = $0 }
        }
        if !tracks.isEmpty { ran.append("mesh") }
        if segmentNow || personMask != nil {
            let segmenter = try segmenter(for: image)
            if personMask == nil {
                lastSegmenter = segmenter
                maskFrameSize = (image.width, image.height)
            }
            try segmenter.add(to: models, image: image, lowResolution: personMask)
            ran.append("segment")
        }
        if !ran.isEmpty { recorder.beginSection("face." + ran.joined(separator: "+")) }
        try models.record(on: recorder, recordings: recordedGroups)
        let pendingDetections = try detectionLists.map { try merge.finish($0, on: recorder) }
        recorder.endSection()
        try submit(recorder)

        // Follow the tracked faces; drop the lost ones. A face whose region repeats the last
        // frame's keeps all it had (landmarks, filter, ROI). After a cut nothing carries over
        // (no landmarks, filter or ID blend the shots): the faces are searched for afresh.
        var lostAny = false
        var kept: [Track] = []
        lost = []
        let finding = RegionRepeats.finding(repeatCheck, count: tracks.count)
        lastFrameWasCut = finding.isCut
        if finding.isCut {
            lostAny = !tracks.isEmpty
            tracks = []
        }
        /// The mesh lost the face: held at its last landmarks while the hold lasts, else dropped.
        func holdOrDrop(_ index: Int, _ track: Track) {
            lostAny = true
            if options.tracking, track.missed < options.holdFrames {
                var held = before[index]
                held.missed += 1
                held.previousROI = nil // no motion to go on
                kept.append(held)
            } else {
                lost.append(track)
            }
        }
        for (index, (track, pending)) in zip(tracks, pendingMeshes.map { $0! }).enumerated() {
            if finding.repeated[index] {
                // A held face ages on a repeated picture as on a new one, which the mesh would
                // reject again: a face gone from a still shot fades out and is dropped instead
                // of being held, and drawn, for good.
                if track.missed > 0 { holdOrDrop(index, track) } else { kept.append(before[index]) }
                continue
            }
            let (landmarks, presence) = try mesh.decode(pending)
            guard presence >= options.minPresence else {
                holdOrDrop(index, track)
                continue
            }
            var track = track
            track.missed = 0
            track.previousROI = track.fromDetection ? nil : track.roi
            track.fromDetection = false
            track.raw = landmarks
            track.presence = presence
            track.smoothed = track.smoother?.filter(landmarks, time: time) ?? landmarks
            kept.append(track)
        }
        tracks = removingDuplicates(kept)

        // Detections as recorded, or now (the whole frame) when a face was lost.
        var ranDetection = detectNow
        if detectNow {
            try addFaces(merging: pendingDetections!, in: image, time: time, minimumSide: uprightMinimumSide, submit: submit)
        } else if lostAny && tracks.count < options.maxFaces {
            let recorder = try CommandRecorder(context: context)
            recorder.beginSection("face.detect")
            let pending = try recordDetection(uprightViews(for: image, fullSearch: false), of: image, on: recorder)
            try submit(recorder)
            try addFaces(merging: pending, in: image, time: time, submit: submit)
            ranDetection = true
        }
        // The frame turned by quarter turns (a photo taken sideways): when nothing was found
        // upright, every turn at the coarse levels; then, at the turns the faces found lie
        // at, the finer levels too (the upright search finds a sideways face only when large).
        // A face found upright in a still (or a video's first frame) is looked at again
        // turned, around itself: a sideways or upside-down face's parts can pass for an
        // upright face (its mouth and chin as eyes and nose), which its own reading replaces.
        if options.detector == .auto, options.policy.searchesRotations, fullSearch {
            var searched = Set<DetectionPolicy.TurnedLevel>()
            if tracks.isEmpty {
                let coarse = options.policy.turnedLevels(width: image.width, height: image.height, turns: [1, 2, 3], coarsestOnly: true)
                try searchTurned(coarse, in: image, time: time, submit: submit)
                searched.formUnion(coarse)
                ranDetection = true
            } else if checksReadings {
                try searchTurned(around: tracks.filter { $0.missed == 0 }, in: image, submit: submit)
                ranDetection = true
            }
            let turns = Set(tracks.map { Self.quarterTurns($0.roi.rotation) }).subtracting([0]).sorted()
            let finer = options.policy.turnedLevels(width: image.width, height: image.height, turns: turns, coarsestOnly: false)
                .filter { !searched.contains($0) }
            if !finer.isEmpty {
                try searchTurned(finer, in: image, time: time, submit: submit)
                ranDetection = true
            }
        }

        frameIndex += 1
        lastTimings = GPUTimings(sections: timings)
        lastSubmissionCount = submissions
        let faces = tracks.map { track in
            Face(landmarks: track.smoothed, score: track.presence, trackID: track.id, missedFrames: track.missed,
                 weight: 1 - Float(track.missed) / Float(options.holdFrames + 1))
        }
        return FaceTrackerResult(faces: faces, personMask: maskFrameSize != nil ? lastSegmenter?.lowResolutionMask : nil,
                                 ranDetection: ranDetection)
    }

    /// Whether faces found are checked against other readings of them: in a still and a
    /// video's first frame, where no tracked landmarks would jump.
    private var checksReadings: Bool { !options.tracking || frameIndex == 0 }

    /// Searches the frame turned as `levels` say (one submission for the detectors).
    private func searchTurned(_ levels: [DetectionPolicy.TurnedLevel], in image: GPUImage, time: Double,
                              submit: (CommandRecorder) throws -> Void) throws {
        let recorder = try CommandRecorder(context: context)
        recorder.beginSection("face.detect")
        let runs = levels.flatMap { level in
            options.policy.views(of: level, width: image.width, height: image.height).flatMap { view in
                level.level == nil ? FaceDetectorModel.allCases.map { ($0, view) } : [(FaceDetectorModel.fullRange, view)]
            }
        }
        let pending = try recordDetection(runs, of: image, on: recorder)
        try submit(recorder)
        // A turned search is an extra look where nothing was found upright: there a pattern at
        // the models' reach (a 9-px "face" in ffmpeg's testsrc2 turned) is likelier than a face,
        // so it keeps what the policy promises to find, faces of minimumFaceSize or more.
        try addFaces(merging: pending, in: image, time: time, minimumSide: options.policy.minimumFaceSize, submit: submit)
    }

    /// Looks at each of `faces` again in a square around it, turned by 90, 180 and 270 degrees
    /// (by the short-range model: a face a quarter to a half of the square is its kind; one
    /// submission), and lets what the mesh reads there replace a face it
    /// reads better. Nothing is added: this checks faces, it does not search.
    private func searchTurned(around faces: [Track], in image: GPUImage, submit: (CommandRecorder) throws -> Void) throws {
        guard !faces.isEmpty else { return }
        let views = faces.flatMap { face in
            let box = face.landmarkBox
            let side = DetectionPolicy.turnedCheckScale * max(box.width, box.height)
            // Every quarter turn: the one it was read at too (a closer look), and upright (an
            // upright face read turned).
            return (0...3).map { turns in
                DetectionView.tile(x: box.centre.x - side / 2, y: box.centre.y - side / 2, side: side,
                                   width: image.width, height: image.height, quarterTurns: turns)
            }
        }
        let recorder = try CommandRecorder(context: context)
        recorder.beginSection("face.detect")
        let pending = try recordDetection(views.map { (FaceDetectorModel.shortRange, $0) }, of: image, on: recorder)
        try submit(recorder)
        // Only a detection that could replace a face is meshed: one turned otherwise than a face
        // it meets, or meeting a face the mesh is unsure of (one turned alike replaces no sure face).
        let found = try meshedFaces(pending, in: image, minimumSide: options.policy.minimumFaceSize, avoiding: [],
                                    count: 2 * views.count, submit: submit) { roi in
            faces.contains { face in
                roi.unrotatedBox.intersectionOverSmaller(face.landmarkBox) > 0
                    && (abs(FaceROI.normalised(roi.rotation - face.roi.rotation)) > .pi / 4 || face.presence < Self.surePresence)
            }
        }
        replaceBetterRead(faces, with: found)
    }

    /// Each of `faces` that a reading in `found` reads better (`readsBetter`) takes that
    /// reading, under its own ID; the rest of `found` is left out.
    private func replaceBetterRead(_ faces: [Track], with found: [Track]) {
        var faces = faces
        for reading in found {
            guard let index = faces.firstIndex(where: { isSameFace($0, reading) }), readsBetter(reading, than: faces[index]) else { continue }
            let id = faces[index].id
            faces[index] = reading
            faces[index].id = id
        }
        // A face that took a new reading may now meet another's reading of it: one is kept.
        let kept = removingDuplicates(faces)
        tracks.removeAll { track in faces.contains { $0.id == track.id } && !kept.contains { $0.id == track.id } }
        for face in kept {
            if let index = tracks.firstIndex(where: { $0.id == face.id }) { tracks[index] = face }
        }
    }

    /// The quarter turn (0...3, clockwise) nearest a face's roll.
    static func quarterTurns(_ rotation: Float) -> Int {
        ((Int((rotation / (.pi / 2)).rounded()) % 4) + 4) % 4
    }

    /// The upright (model, view) runs of a detection pass: the whole frame letterboxed, and
    /// for `auto` with both models, plus tiles on a full search.
    private func uprightViews(for image: GPUImage, fullSearch: Bool) -> [(FaceDetectorModel, DetectionView)] {
        let whole = DetectionView.letterbox(width: image.width, height: image.height)
        switch options.detector {
        case .short: return [(.shortRange, whole)]
        case .full: return [(.fullRange, whole)]
        case .auto:
            var runs: [(FaceDetectorModel, DetectionView)] = [(.shortRange, whole), (.fullRange, whole)]
            guard fullSearch else { return runs }
            let tiles = options.policy.tiles(width: image.width, height: image.height)
            // A still, and a video's first frame, are searched whole; later video passes take
            // a few tiles each.
            if !options.tracking || frameIndex == 0 || tiles.count <= options.policy.tilesPerVideoPass {
                runs += tiles.map { (.fullRange, $0) }
            } else if !tiles.isEmpty {
                runs += (0..<options.policy.tilesPerVideoPass).map { (.fullRange, tiles[(tileCursor + $0) % tiles.count]) }
                tileCursor = (tileCursor + options.policy.tilesPerVideoPass) % tiles.count
            }
            return runs
        }
    }

    private func recordDetection(_ runs: [(FaceDetectorModel, DetectionView)], of image: GPUImage,
                                 on recorder: CommandRecorder) throws -> DetectionMerge.Pending {
        try merge.record(try detectors(for: runs), of: image, on: recorder)
    }

    /// Meshes what the detectors found and keeps the faces whose mesh the model accepts.
    /// Each model's candidates are merged over its views on the GPU (one suppression per model: the
    /// two models draw boxes of different sizes, so their boxes are not averaged together).
    /// Both models' detections of a face are meshed, since one's box can give a mesh the
    /// model rejects where the other's does not. Detections of an already tracked face are skipped, the largest
    /// faces go first, and at most `maxFaces` faces are kept.
    /// - Parameter minimumSide: detections whose box is smaller (pixels a side) are not meshed.
    private func addFaces(merging pending: DetectionMerge.Pending, in image: GPUImage, time: Double, minimumSide: Float = 0,
                          submit: (CommandRecorder) throws -> Void) throws {
        // Held faces make room: a detection of one of them takes its place.
        let active = tracks.filter { $0.missed == 0 }
        let free = options.maxFaces - active.count
        guard free > 0 else { return }
        let found = try meshedFaces(pending, in: image, minimumSide: minimumSide, avoiding: active, count: 2 * free, submit: submit)
        // In a still a face read better takes that reading (a video's tracked faces keep
        // theirs: their landmarks do not jump); the largest new faces first, as the cap keeps
        // the first.
        if checksReadings { replaceBetterRead(active, with: found) }
        let new = removingDuplicates(active + found).dropFirst(active.count)
            .sorted { $0.roi.side > $1.roi.side }.prefix(free)
        for var track in new {
            // A face the mesh lost in this frame and the detector found again is the same
            // face: it keeps its ID and its filter, so its landmarks do not jump.
            if let index = tracks.firstIndex(where: { $0.missed > 0 && isSameFace($0, track) }) {
                let old = tracks.remove(at: index)
                track.id = old.id
                track.smoother = old.smoother ?? track.smoother
            } else if let index = lost.firstIndex(where: { isSameFace($0, track) }) {
                let old = lost.remove(at: index)
                track.id = old.id
                track.smoother = old.smoother ?? track.smoother
            } else {
                track.id = nextID
                nextID += 1
            }
            track.smoothed = track.smoother?.filter(track.raw, time: time) ?? track.raw
            tracks.append(track)
        }
        // The cap counts held faces too: the longest missed go first.
        while tracks.count > options.maxFaces, let index = tracks.indices.filter({ tracks[$0].missed > 0 })
            .max(by: { tracks[$0].missed < tracks[$1].missed }) {
            tracks.remove(at: index)
        }
    }

    /// New tracks (ID 0) for the faces the mesh accepts of at most `count` detections, short
    /// range's first and the largest first, less those smaller than `minimumSide`, of a face in
    /// `avoiding` or not `wanted`.
    private func meshedFaces(_ pending: DetectionMerge.Pending, in image: GPUImage, minimumSide: Float, avoiding: [Track],
                             count: Int, submit: (CommandRecorder) throws -> Void,
                             keeping wanted: (FaceROI) -> Bool = { _ in true }) throws -> [Track] {
        // Short range first: where both models' meshes are accepted, the face keeps the mesh
        // MediaPipe's face mesh makes (it detects with short range).
        let detections = FaceDetectorModel.allCases.flatMap { model in
            pending.detections(model).filter { min($0.box.width, $0.box.height) >= minimumSide }.sorted { $0.box.area > $1.box.area }
        }
        let tracked = avoiding.map { $0.roi.unrotatedBox }
        let rois = detections.map(FaceROI.init(detection:)).filter { roi in
            tracked.allSatisfy { $0.intersectionOverUnion(roi.unrotatedBox) < options.sameFaceOverlap } && wanted(roi)
        }.prefix(count)
        guard !rois.isEmpty else { return [] }
        let recorder = try CommandRecorder(context: context)
        recorder.beginSection("face.mesh")
        let mesh = try self.mesh
        let meshes = try rois.map { try mesh.record(on: recorder, image: image, roi: $0) }
        try submit(recorder)
        let accepted = zip(rois, meshes.map(mesh.decode)).filter { $0.1.presence >= options.minPresence }
            .map { Seed(points: $0.1.landmarks, presence: $0.1.presence, roi: $0.0, fromDetection: true) }
        return try settled(accepted, in: image, submit: submit).map { seed in
            let smoother = options.tracking ? options.smoothing.map(LandmarkSmoother.init) : nil
            return Track(id: 0, raw: seed.points, smoothed: seed.points, presence: seed.presence, smoother: smoother,
                         fromDetection: seed.fromDetection, usedROI: seed.roi)
        }
    }

    /// A new face's mesh: where it came from, and the ROI it was made in.
    private struct Seed {
        var points: [SIMD3<Float>]
        var presence: Float
        var roi: FaceROI
        var fromDetection: Bool
    }

    /// While tracking, each new face's mesh made again from the ROI of its own landmarks (one
    /// more submission), as every later frame's is: so a face's first landmarks are already
    /// those tracking gives, and a still face that repeats its first frame keeps them. Where
    /// the mesh rejects that ROI, the detection's mesh stays.
    private func settled(_ seeds: [Seed], in image: GPUImage, submit: (CommandRecorder) throws -> Void) throws -> [Seed] {
        guard options.tracking, !seeds.isEmpty else { return seeds }
        let rois = seeds.map { FaceROI(landmarks: $0.points.map { SIMD2($0.x, $0.y) }) }
        let recorder = try CommandRecorder(context: context)
        recorder.beginSection("face.mesh")
        let mesh = try self.mesh
        let again = try rois.map { try mesh.record(on: recorder, image: image, roi: $0) }
        try submit(recorder)
        return zip(seeds, zip(rois, again.map(mesh.decode))).map { seed, second in
            let (roi, (points, presence)) = second
            return presence >= options.minPresence ? Seed(points: points, presence: presence, roi: roi, fromDetection: false) : seed
        }
    }

    /// One track per face: two tracks are one face when their ROIs overlap as much as one
    /// face's would, or when most of the smaller's landmark box lies in the larger's (two
    /// readings of one face: a mesh slid off it, or a face's parts read as a face, as a half
    /// face cut by the frame's edge or an upside-down face's mouth and chin read upright).
    /// Of two readings of one face: where one lies inside the other and covers at most half
    /// of it, it is a reading of part of the face and the larger is kept (turned otherwise,
    /// only when the mesh is sure of it or at least as sure as of the part: an upright face
    /// is not given up for an unsure turned reading around it); of two turned alike
    /// (within 45 degrees: two views of one reading) the earlier, as MediaPipe's order has it,
    /// unless the mesh is unsure of it and surer of the other; of two turned otherwise (one
    /// face read as upright and as upside down), the one the mesh is surer of. The kept
    /// reading takes the earlier's ID.
    /// Most of a landmark box, as a share of the smaller box.
    static let sameFaceShare: Float = 0.5
    /// A reading lies inside another when this much of it does ...
    static let partOfFace: Float = 0.8
    /// ... and is part of it when it covers at most this share of the other's area.
    static let partOfFaceArea: Float = 0.5
    /// The mesh is sure of a face from this presence up (faces seen whole score 0.97–1.0; of
    /// the 23 photos' faces all but four score 0.99 or more).
    static let surePresence: Float = 0.99

    private func isSameFace(_ a: Track, _ b: Track) -> Bool {
        a.roi.unrotatedBox.intersectionOverUnion(b.roi.unrotatedBox) >= options.sameFaceOverlap
            || a.landmarkBox.intersectionOverSmaller(b.landmarkBox) >= Self.sameFaceShare
    }

    /// Whether `challenger` is a better reading of `kept`'s face (`isSameFace`).
    private func readsBetter(_ challenger: Track, than kept: Track) -> Bool {
        let (a, b) = (challenger.landmarkBox, kept.landmarkBox)
        let smallerArea = min(a.area, b.area), largerArea = max(a.area, b.area)
        let turnedAlike = Self.turnedAlike(challenger, kept)
        if a.intersectionOverSmaller(b) >= Self.partOfFace, smallerArea <= Self.partOfFaceArea * largerArea {
            let (larger, part) = a.area > b.area ? (challenger, kept) : (kept, challenger)
            let largerWins = turnedAlike || larger.presence >= min(part.presence, Self.surePresence)
            return largerWins == (a.area > b.area)
        }
        if turnedAlike, kept.presence >= Self.surePresence { return false }
        return challenger.presence > kept.presence
    }

    /// Two readings whose rolls are within 45 degrees.
    private static func turnedAlike(_ a: Track, _ b: Track) -> Bool {
        abs(FaceROI.normalised(a.roi.rotation - b.roi.rotation)) <= .pi / 4
    }

    private func removingDuplicates(_ candidates: [Track]) -> [Track] {
        var result: [Track] = []
        for track in candidates {
            guard let index = result.firstIndex(where: { isSameFace($0, track) }) else {
                result.append(track)
                continue
            }
            if readsBetter(track, than: result[index]) {
                let id = result[index].id
                result[index] = track
                result[index].id = id
            }
        }
        return result
    }
}
