import Foundation
import VelvetGPU
import VelvetNN

/// Which BlazeFace model finds faces.
public enum DetectorChoice: String, Sendable, CaseIterable {
    case short, full
    /// Short range first; full range instead when the frame is wide (long side at least
    /// 1.5x the short side: letterboxing leaves a face under 2/3 of the detector's input)
    /// or large (long side at least 2000 px: camera photos, often groups), and full range
    /// as well whenever short range finds nothing.
    case auto

    /// The first model to run on a `width` x `height` frame.
    public func primary(width: Int, height: Int) -> FaceDetectorModel {
        switch self {
        case .short: return .shortRange
        case .full: return .fullRange
        case .auto:
            let long = max(width, height), short = max(min(width, height), 1)
            return Float(long) >= 1.5 * Float(short) || long >= 2000 ? .fullRange : .shortRange
        }
    }
}

public struct FaceTrackerOptions: Sendable, Equatable {
    public var detector: DetectorChoice = .auto
    /// Most faces tracked at once.
    public var maxFaces = 4
    /// false: every frame is a still (detection, then the mesh from each detection; no
    /// smoothing), as MediaPipe's static_image_mode.
    public var tracking = true
    /// While tracking, the detector also runs every this many frames to find new faces
    /// (when fewer than `maxFaces` are tracked); 0: only when no face is tracked or one was lost.
    public var detectionInterval = 10
    /// Segmentation runs every this many frames (the mask is reused in between); 0: off.
    public var segmentationInterval = 1
    public var segmentationModel: SegmentationModel = .auto
    /// Also resize the mask to frame size (r16f); otherwise only the model-sized mask is made.
    public var fullResolutionMask = true
    /// Landmark filter while tracking; nil: raw landmarks.
    public var smoothing: LandmarkSmoothing? = .standard
    /// A face whose mesh presence falls below this is lost.
    public var minPresence: Float = 0.5
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
        guard (1...64).contains(maxFaces) else { throw FaceError.invalidArgument("maxFaces must be 1...64, got \(maxFaces)") }
        guard detectionInterval >= 0, segmentationInterval >= 0 else {
            throw FaceError.invalidArgument("detection and segmentation intervals must be >= 0")
        }
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
    private let mesh: FaceMeshModel
    private var detectors: [FaceDetectorModel: FaceDetector] = [:]
    private var segmenters: [SegmentationModel: PersonSegmenter] = [:]
    private var mask: GPUImage?
    private var maskValid = false
    private var lastSegmenter: PersonSegmenter?

    private struct Track {
        var id: Int
        var raw: [SIMD3<Float>]
        var smoothed: [SIMD3<Float>]
        var presence: Float
        var smoother: LandmarkSmoother?
        /// The ROI of the frame before `raw`'s, for motion prediction.
        var previousROI: FaceROI?
        var roi: FaceROI { FaceROI(landmarks: raw.map { SIMD2($0.x, $0.y) }) }

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

        /// Within the mesh's frame-to-frame noise on a still face (measured: ~0.4 % of IOD).
        static func isClose(_ a: FaceROI, _ b: FaceROI) -> Bool {
            let shift = a.centre - b.centre
            return (shift * shift).sum().squareRoot() < 0.01 * b.side && abs(a.side / b.side - 1) < 0.01
                && abs(FaceROI.normalised(a.rotation - b.rotation)) < 0.015
        }
    }

    private var tracks: [Track] = []
    private var frameIndex = 0
    private var nextID = 1
    /// GPU time per section of the last frame ("face.detect", "face.mesh", "face.segment").
    public private(set) var lastTimings = GPUTimings()
    /// GPU submissions the last frame needed.
    public private(set) var lastSubmissionCount = 0

    public init(context: GPUContext, options: FaceTrackerOptions = .video, files: FaceModelFiles = .standard,
                kernels: NNKernels? = nil) throws {
        self.context = context
        self.options = try options.validated()
        self.files = files
        self.kernels = kernels ?? NNKernels(context: context)
        mesh = try FaceMeshModel(context: context, files: files, kernels: self.kernels)
    }

    /// Forgets every tracked face (the next frame starts with detection).
    public func reset() {
        tracks.removeAll()
        frameIndex = 0
        maskValid = false
    }

    private func detector(_ model: FaceDetectorModel) throws -> FaceDetector {
        if let detector = detectors[model] { return detector }
        let detector = try FaceDetector(context: context, model: model, files: files, kernels: kernels,
                                        scoreThreshold: options.minDetectionScore)
        detectors[model] = detector
        return detector
    }

    private func segmenter(for image: GPUImage) throws -> PersonSegmenter {
        let model = options.segmentationModel.resolved(width: image.width, height: image.height)
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

    /// Processes one frame (an upright working image whose GPU writes have completed).
    /// - Parameter time: presentation time in seconds (for the landmark filter); frames are
    ///   taken to be 1/30 s apart when nil.
    public func process(_ image: GPUImage, time: Double? = nil) throws -> FaceTrackerResult {
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
        if let mask, mask.width != image.width || mask.height != image.height { self.mask = nil; maskValid = false }
        let segmentNow = options.segmentationInterval > 0
            && (!maskValid || frameIndex % options.segmentationInterval == 0)
        let primary = options.detector.primary(width: image.width, height: image.height)
        let detectNow = tracks.isEmpty || (options.detectionInterval > 0 && frameIndex % options.detectionInterval == 0
                                           && tracks.count < options.maxFaces)

        // Submission 1: tracked meshes, segmentation, and the detector when due.
        let recorder = try CommandRecorder(context: context)
        var pendingDetection: (FaceDetector, FaceDetector.Pending)?
        if detectNow {
            recorder.beginSection("face.detect")
            let detector = try detector(primary)
            pendingDetection = (detector, try detector.record(on: recorder, image: image))
        }
        recorder.beginSection("face.mesh")
        for index in tracks.indices { tracks[index].usedROI = tracks[index].nextROI(predict: options.predictsMotion) }
        let pendingMeshes = try tracks.map { try mesh.record(on: recorder, image: image, roi: $0.usedROI!) }
        if segmentNow {
            recorder.beginSection("face.segment")
            let segmenter = try segmenter(for: image)
            if options.fullResolutionMask, mask == nil {
                mask = try GPUImage(context: context, width: image.width, height: image.height, format: .r16f)
            }
            try segmenter.record(on: recorder, image: image, into: options.fullResolutionMask ? mask : nil)
            lastSegmenter = segmenter
            maskValid = true
        }
        recorder.endSection()
        try submit(recorder)

        // Follow the tracked faces; drop the lost ones.
        var lostAny = false
        var kept: [Track] = []
        for (track, pending) in zip(tracks, pendingMeshes) {
            let (landmarks, presence) = mesh.decode(pending)
            guard presence >= options.minPresence else { lostAny = true; continue }
            var track = track
            track.previousROI = track.roi
            track.raw = landmarks
            track.presence = presence
            track.smoothed = track.smoother?.filter(landmarks, time: time) ?? landmarks
            kept.append(track)
        }
        tracks = removingDuplicates(kept)

        // Detections: as recorded, or now when a face was lost; full range when short found none.
        var detections: [FaceDetection]?
        var ranDetection = detectNow
        if let (detector, pending) = pendingDetection {
            detections = detector.decode(pending)
        } else if lostAny && tracks.count < options.maxFaces {
            detections = try runDetector(primary, on: image, submit: submit)
            ranDetection = true
        }
        if options.detector == .auto, primary == .shortRange, let found = detections, found.isEmpty {
            detections = try runDetector(.fullRange, on: image, submit: submit)
        }

        // Submission 2: meshes for detections that are not a tracked face already.
        if let detections, !detections.isEmpty, tracks.count < options.maxFaces {
            var rois: [FaceROI] = []
            for detection in detections where tracks.count + rois.count < options.maxFaces {
                let roi = FaceROI(detection: detection)
                let known = tracks.map(\.roi) + rois
                if known.allSatisfy({ $0.unrotatedBox.intersectionOverUnion(roi.unrotatedBox) < options.sameFaceOverlap }) {
                    rois.append(roi)
                }
            }
            if !rois.isEmpty {
                let recorder = try CommandRecorder(context: context)
                recorder.beginSection("face.mesh")
                let pending = try rois.map { try mesh.record(on: recorder, image: image, roi: $0) }
                try submit(recorder)
                var added = tracks
                for item in pending {
                    let (landmarks, presence) = mesh.decode(item)
                    guard presence >= options.minPresence else { continue }
                    var smoother = options.tracking ? options.smoothing.map(LandmarkSmoother.init) : nil
                    let smoothed = smoother?.filter(landmarks, time: time) ?? landmarks
                    added.append(Track(id: nextID, raw: landmarks, smoothed: smoothed, presence: presence, smoother: smoother))
                    nextID += 1
                }
                tracks = removingDuplicates(added)
            }
        }

        frameIndex += 1
        lastTimings = GPUTimings(sections: timings)
        lastSubmissionCount = submissions
        let faces = tracks.map { Face(landmarks: $0.smoothed, score: $0.presence, trackID: $0.id) }
        return FaceTrackerResult(faces: faces, personMask: options.fullResolutionMask && maskValid ? mask : nil,
                                 lowResolutionPersonMask: maskValid ? lastSegmenter?.lowResolutionMask : nil,
                                 ranDetection: ranDetection)
    }

    private func runDetector(_ model: FaceDetectorModel, on image: GPUImage,
                             submit: (CommandRecorder) throws -> Void) throws -> [FaceDetection] {
        let detector = try detector(model)
        let recorder = try CommandRecorder(context: context)
        recorder.beginSection("face.detect")
        let pending = try detector.record(on: recorder, image: image)
        try submit(recorder)
        return detector.decode(pending)
    }

    /// Keeps the earlier of two tracks whose ROIs overlap as much as one face's would.
    private func removingDuplicates(_ candidates: [Track]) -> [Track] {
        var result: [Track] = []
        for track in candidates {
            let box = track.roi.unrotatedBox
            if result.allSatisfy({ $0.roi.unrotatedBox.intersectionOverUnion(box) < options.sameFaceOverlap }) {
                result.append(track)
            }
        }
        return result
    }
}
