import Foundation
import VelvetGPU
import VelvetNN

/// The face tracker run K frames ahead of the frame being rendered (`--look-ahead K`):
/// `analyze` tracks each frame as it is decoded (raw landmarks: the window smooths them,
/// not the causal filter), and `result` gives a frame's faces once the K frames after it
/// have been analysed (`TrackWindow`), with its person mask segmented then, on the frame
/// itself (so no mask is kept per pending frame). A lost face is held K frames (at least the
/// tracker's own hold): a gap of up to K frames is interpolated, and a face that leaves fades
/// out over K + 1. `analyze` may run on a thread of its own, alongside `result` for an
/// earlier frame (the window is shared under a lock; each has its own GPU work).
public final class LookAheadTracker: @unchecked Sendable {
    /// Frames looked ahead when `--look-ahead` is not given (video files), chosen by
    /// measurement (docs/QUALITY.md, Look-ahead).
    public static let standardFrames = 6
    /// The most frames `--look-ahead` takes.
    public static let framesRange = 0...30

    public let tracker: FaceTracker
    public let lookAhead: Int
    private var window: TrackWindow
    private let windowLock = NSLock()
    private let segmentation: FrameSegmentation?
    /// The tracker's raw faces of the last frame analysed, as the window took them (read it
    /// on the thread that calls `analyze`).
    public private(set) var lastAnalysed: [Face] = []
    /// GPU time per section of the last `result` call (`analyze` returns its own).
    public private(set) var lastTimings = GPUTimings()

    /// - Parameter options: the tracker's video options; their landmark filter is replaced by
    ///   the window, their segmentation runs in `result`.
    public init(context: GPUContext, options: FaceTrackerOptions = .video, lookAhead: Int = standardFrames,
                files: FaceModelFiles = .standard) throws {
        var trackerOptions = options
        trackerOptions.smoothing = nil
        trackerOptions.segmentationInterval = 0
        // A lost face is held for as long as the window looks ahead, so that one seen again
        // within K frames stays its track and the window bridges the whole gap (a causal
        // tracker must give up sooner: it cannot know the face comes back).
        trackerOptions.holdFrames = max(options.holdFrames, lookAhead)
        let kernels = NNKernels(context: context)
        tracker = try FaceTracker(context: context, options: trackerOptions, files: files, kernels: kernels)
        self.lookAhead = lookAhead
        window = TrackWindow(lookAhead: lookAhead)
        segmentation = options.segmentationInterval > 0
            ? FrameSegmentation(context: context, model: options.segmentationModel, files: files, kernels: kernels) : nil
    }

    /// Loads the models before the first frame (the tracker's, and the segmentation's for a
    /// `width` x `height` frame when the size is known), as `FaceTracker.prepare`.
    public func prepare(width: Int?, height: Int?) throws {
        try tracker.prepare(width: nil, height: nil)
        if let segmentation, let width, let height { try segmentation.prepare(width: width, height: height) }
    }

    /// Tracks the next frame of the input (frames in order, each one once); returns the
    /// tracker's GPU time per section. `previous`: the caller's image of the frame analysed
    /// last, intact until this returns (`.copied`: the tracker keeps a copy).
    @discardableResult
    public func analyze(_ image: GPUImage, time: Double, previous: FaceTracker.LastFrame = .copied) throws -> GPUTimings {
        let found = try tracker.process(image, time: time, last: previous)
        let isCut = tracker.lastFrameWasCut
        windowLock.withLock { window.add(found.faces, isCut: isCut) }
        lastAnalysed = found.faces
        return tracker.lastTimings
    }

    /// Frames analysed so far, and results handed out.
    public var analysed: Int { windowLock.withLock { window.added } }
    public var emitted: Int { windowLock.withLock { window.emitted } }

    /// The faces of frame `index`, the next one not yet handed out, over `image` (that frame's
    /// working image): call once the K frames after it are analysed, or at the end of the input.
    /// With `recorder`, the person mask is recorded there (for stages recorded after it on the
    /// same recorder: one round trip to the GPU fewer a frame), else submitted and waited for.
    public func result(for image: GPUImage, index: Int, on recorder: CommandRecorder? = nil) throws -> FaceTrackerResult {
        let faces = try windowLock.withLock { () throws -> [Face] in
            guard index == window.emitted, window.isReady(atEnd: true) else {
                throw FaceError.invalidArgument("look-ahead: frame \(index) asked for, frame \(window.emitted) is next of \(window.added) analysed")
            }
            return window.next()
        }
        let person = try segmentation?.segment(image, on: recorder)
        lastTimings = person?.timings ?? GPUTimings()
        return FaceTrackerResult(faces: faces, personMask: person?.mask, lowResolutionPersonMask: person?.lowResolution,
                                 ranDetection: false)
    }
}
