import Foundation
import VelvetGPU
import VelvetNN

/// The face tracker run K frames ahead of the frame being rendered (`--look-ahead K`):
/// `analyze` tracks each frame as it is decoded (raw landmarks: the window smooths them,
/// not the causal filter), and `result` gives a frame's faces once the K frames after it
/// have been analysed (`TrackWindow`), with its person mask: segmented at the model's size in
/// `analyze` (side by side with the mesh) and kept until the frame has completed. A lost face
/// is held K frames (at least the tracker's own hold): a gap of up to K frames is interpolated,
/// and a face that leaves fades out over K + 1. `analyze` may run on a thread of its own, alongside `result` for an
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
    private let segments: Bool
    /// Model-sized person masks of the frames analysed and not yet completed, by frame index;
    /// a completed frame's mask is reused (`completed(through:)`), so a steady render makes none.
    private var personMasks: [Int: GPUImage] = [:]
    private var freePersonMasks: [GPUImage] = []
    private let masksLock = NSLock()
    /// The tracker's raw faces of the last frame analysed, as the window took them (read it
    /// on the thread that calls `analyze`).
    public private(set) var lastAnalysed: [Face] = []

    /// - Parameter options: the tracker's video options; their landmark filter is replaced by
    ///   the window, their segmentation (on or off) runs on every frame in `analyze`.
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
        segments = options.segmentationInterval > 0
    }

    /// Loads the models before the first frame (the tracker's, and the segmentation's for a
    /// `width` x `height` frame when the size is known), as `FaceTracker.prepare`.
    public func prepare(width: Int?, height: Int?) throws {
        try tracker.prepare(width: width, height: height, segmentation: segments)
    }

    /// Tracks and segments the next frame of the input (frames in order, each one once);
    /// returns the tracker's GPU time per section. `previous`: the caller's image of the frame
    /// analysed last, intact until this returns (`.copied`: the tracker keeps a copy).
    @discardableResult
    public func analyze(_ image: GPUImage, time: Double, previous: FaceTracker.LastFrame = .copied) throws -> GPUTimings {
        var personMask: GPUImage?
        if segments {
            let reused = masksLock.withLock { freePersonMasks.popLast() }
            personMask = try reused ?? tracker.makePersonMask(width: image.width, height: image.height)
            let index = analysed
            masksLock.withLock { personMasks[index] = personMask }
        }
        let found = try tracker.process(image, time: time, last: previous, personMask: personMask)
        let isCut = tracker.lastFrameWasCut
        windowLock.withLock { window.add(found.faces, isCut: isCut) }
        lastAnalysed = found.faces
        return tracker.lastTimings
    }

    /// Frames through `index` have finished on the GPU: their person masks may be reused by
    /// later frames' `analyze` (a steady render then allocates none).
    public func completed(through index: Int) {
        masksLock.withLock {
            for frame in personMasks.keys where frame <= index { freePersonMasks.append(personMasks.removeValue(forKey: frame)!) }
        }
    }

    /// Frames analysed so far, and results handed out.
    public var analysed: Int { windowLock.withLock { window.added } }
    public var emitted: Int { windowLock.withLock { window.emitted } }

    /// The faces of frame `index`, the next one not yet handed out: call once the K frames
    /// after it are analysed, or at the end of the input. Its person mask is the one `analyze`
    /// segmented, at the model's size; it stays the frame's until `completed(through:)` passes it.
    public func result(index: Int) throws -> FaceTrackerResult {
        let faces = try windowLock.withLock { () throws -> [Face] in
            guard index == window.emitted, window.isReady(atEnd: true) else {
                throw FaceError.invalidArgument("look-ahead: frame \(index) asked for, frame \(window.emitted) is next of \(window.added) analysed")
            }
            return window.next()
        }
        guard segments else { return FaceTrackerResult(faces: faces, personMask: nil, ranDetection: false) }
        guard let mask = masksLock.withLock({ personMasks[index] }) else {
            throw FaceError.invalidArgument("look-ahead: frame \(index) has no person mask")
        }
        return FaceTrackerResult(faces: faces, personMask: mask, ranDetection: false)
    }
}
