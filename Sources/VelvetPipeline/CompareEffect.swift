import VelvetBeauty
import VelvetFace
import VelvetGPU
import VelvetKernels
import VelvetMedia

/// The A/B render: each frame is tracked once, then each side's stages run on it (A's, then
/// B's, each on a submission of its own so their GPU time is known)
/// and the output shows A on the left half and B on the right, labelled. The first frame
/// with a face is kept (input, A, B, blend weights, person mask) for the report, and every
/// frame's input and both results feed each side's temporal stability (M15).
public final class CompareEffect: FrameEffect, @unchecked Sendable {
    /// What the report is made from, in 0...1 RGB.
    public struct Capture: Sendable {
        public let frameIndex: Int
        public let input: RGBImage
        public let a: RGBImage
        public let b: RGBImage
        public let weightsA: PlaneImage
        public let weightsB: PlaneImage
        public let personMask: PlaneImage
        public let faces: [BeautyFace]
    }

    public let context: GPUContext
    /// GPU milliseconds per stage for each side, summed over frames (tracker under "tracker",
    /// on both sides).
    public var timingsA: [String: Double] { merged(sideA) }
    public var timingsB: [String: Double] { merged(sideB) }
    private let sideA = GPUTimeTotals(), sideB = GPUTimeTotals(), trackerTotals = GPUTimeTotals()
    public private(set) var frames = 0
    /// M15 of each side over the frames rendered so far (complete after `finishMeasuring()`).
    public private(set) var stabilityA = QualityMetrics.TemporalStability()
    public private(set) var stabilityB = QualityMetrics.TemporalStability()

    private var tracker: FaceTracker?
    /// Video: the tracker runs this far ahead, as a render's does (`BeautyOptions.lookAhead`).
    public let trackerLookAhead: Int
    /// Frames held ahead: the tracker's, and the skin fronts' lead as a render's
    /// (`BeautyEffect.frontLead`), so each side's gains are averaged as a render averages them.
    public var lookAhead: Int { trackerLookAhead > 0 && frontStages != nil ? trackerLookAhead + BeautyEffect.frontLead : trackerLookAhead }
    private var lookAheadTracker: LookAheadTracker?
    /// Each side's skin stage, when both have one pass (fronts are recorded ahead on them).
    private var frontStages: (a: SkinStage, b: SkinStage)? {
        guard let a = passesA.frontStage, let b = passesB.frontStage else { return nil }
        return (a, b)
    }
    /// The frames whose fronts were recorded ahead, and their tracking.
    private var fronts = FrontSchedule<FaceTrackerResult>()
    private let passesA: FacePasses
    private let passesB: FacePasses
    private let split: TypedKernel<KernelLibrary.CompareSplitPush>
    private var sides: (GPUImage, GPUImage)?
    private var pending: (index: Int, downloads: [GPUReadback], sizes: [(Int, Int)], faces: [BeautyFace])?
    /// The last frame's input, A and B on their way back, for M15.
    private var pendingStability: (downloads: [GPUReadback], width: Int, height: Int, faces: [BeautyFace])?

    public var minimumFrameSide: Int { FaceTracker.minimumFrameSide }
    /// Both sides' skin stages (as `BeautyEffect`'s, twice; a side with per-face settings has
    /// two passes and the image between them), the split view and the tracker's copy of the last frame.
    public var workingBytesPerPixel: Int { [passesA, passesB].map { $0.isSplit ? 2 * 24 + 8 : 24 }.reduce(0, +) + 8 + 8 }
    /// Fronts recorded ahead on both sides, as a render's (`BeautyEffect.lookAheadBytesPerPixel`).
    public var lookAheadBytesPerPixel: Int { frontStages != nil ? FrontSchedule<Void>.bytesPerPixel(skinStages: 2) : 0 }

    /// `a`, `b`: each side's stages, as a render of them runs them (`BeautyOptions.skinOnly` for
    /// a comparison of smoothing methods); their tracker options are not used.
    public init(context: GPUContext, a: BeautyOptions, b: BeautyOptions, lookAhead: Int = LookAheadTracker.standardFrames) throws {
        self.context = context
        trackerLookAhead = lookAhead
        // The skin stages keep their blend weights for the report.
        passesA = try FacePasses(context: context, options: a, sidecars: RenderSidecars(), capturesWeights: true)
        passesB = try FacePasses(context: context, options: b, sidecars: RenderSidecars(), capturesWeights: true)
        split = try TypedKernel(context: context)
    }

    public func completed(frame index: Int) throws {
        lookAheadTracker?.completed(through: index)
        finishMeasuring()
    }

    public func record(_ frame: EffectFrame, on recorder: CommandRecorder) throws -> FrameChange {
        let tracked: FaceTrackerResult
        if let lookAheadTracker, let upcoming = frame.upcoming, let stages = frontStages {
            tracked = try recordFronts(for: frame, upcoming: upcoming, tracker: lookAheadTracker, stages: stages)
        } else if let lookAheadTracker {
            tracked = try lookAheadTracker.result(index: frame.index)
        } else {
            if tracker == nil { tracker = try FaceTracker(context: context, options: frame.isStillImage ? .still : .video) }
            tracked = try tracker!.process(frame.input, time: frame.isStillImage ? nil : frame.time)
            addTrackerTimings(tracker!.lastTimings)
        }
        let faces = try FacePasses.beautyFaces(tracked.faces)
        let (imageA, imageB) = try sideImages(like: frame.input)

        var results: [SkinFrame] = []
        for (passes, image, isA) in [(passesA, imageA, true), (passesB, imageB, false)] {
            let side = try CommandRecorder(context: context)
            let (changed, stageFrames) = try passes.record(on: side, input: frame.input, faces: tracked.faces, trackedFaces: tracked.faces,
                                                           personMask: tracked.personMask, userMatte: nil, output: image)
            if changed == nil { try side.copy(frame.input, to: image) }
            // With per-face settings, the largest face's pass's weights.
            guard let skin = stageFrames.first?.skin else { preconditionFailure("the skin stage is never idle") }
            results.append(skin)
            (isA ? sideA : sideB).add(try side.submit().wait())
        }
        frames += 1

        let push = KernelLibrary.CompareSplitPush(size: SIMD2(Int32(frame.output.width), Int32(frame.output.height)),
                                                  split: Int32(frame.output.width / 2),
                                                  glyphScale: Int32(max(2, frame.output.height / 90)))
        recorder.dispatch(split, [.sampledImage(imageA, .nearest), .sampledImage(imageB, .nearest), .storageImage(frame.output)],
                          push: push, covering: frame.output.width, frame.output.height)

        if pending == nil, !faces.isEmpty, let weightsA = results[0].weights, let weightsB = results[1].weights,
           let mask = tracked.personMask {
            let images = [frame.input, imageA, imageB, weightsA, weightsB, mask]
            pending = (frame.index, try images.map { try recorder.download($0) }, images.map { ($0.width, $0.height) }, faces)
        }
        pendingStability = (try [frame.input, imageA, imageB].map { try recorder.download($0) }, frame.input.width,
                            frame.input.height, faces)
        return .whole
    }

    public func prepare(for input: EffectInput) throws {
        guard input.looksAhead else { return }
        if lookAheadTracker == nil { lookAheadTracker = try LookAheadTracker(context: context, lookAhead: trackerLookAhead) }
        try lookAheadTracker!.prepare(width: input.uprightSize?.width, height: input.uprightSize?.height)
    }

    public func look(ahead frame: EffectFrame) throws {
        if lookAheadTracker == nil { lookAheadTracker = try LookAheadTracker(context: context, lookAhead: trackerLookAhead) }
        addTrackerTimings(try lookAheadTracker!.analyze(frame.input, time: frame.time, previous: frame.trackerLastFrame))
    }

    /// Records both sides' skin fronts of the frames through `frame`'s index + `frontLead` not
    /// yet recorded, each side on a submission of its own (waited for, so the tracker's next
    /// person mask does not overwrite the one they read); returns `frame`'s own tracking.
    private func recordFronts(for frame: EffectFrame, upcoming: EffectFrame.Upcoming, tracker: LookAheadTracker,
                              stages: (a: SkinStage, b: SkinStage)) throws -> FaceTrackerResult {
        try fronts.record(for: frame, upcoming: upcoming) { index, image in
            let tracked = try tracker.result(index: index)
            let faces = try FacePasses.beautyFaces(tracked.faces)
            for (stage, side) in [(stages.a, sideA), (stages.b, sideB)] {
                let recorder = try CommandRecorder(context: context)
                try stage.recordFront(on: recorder, image: image, faces: faces, personMask: tracked.personMask, lead: BeautyEffect.frontLead)
                side.add(try recorder.submit().wait())
            }
            return tracked
        }
    }

    private func addTrackerTimings(_ timings: GPUTimings) { trackerTotals.add(timings, as: "tracker") }

    private func merged(_ side: GPUTimeTotals) -> [String: Double] {
        side.milliseconds.merging(trackerTotals.milliseconds, uniquingKeysWith: +)
    }

    /// Adds the last frame to M15; call once the GPU work recorded for it has completed.
    public func finishMeasuring() {
        guard let (downloads, width, height, faces) = pendingStability else { return }
        pendingStability = nil
        let levels = downloads.map { QualityMetrics.TemporalStability.levels($0, pixels: width * height) }
        stabilityA.add(input: levels[0], output: levels[1], width: width, height: height, faces: faces)
        stabilityB.add(input: levels[0], output: levels[2], width: width, height: height, faces: faces)
    }

    /// The kept frame, once the render that made it has finished.
    public private(set) lazy var capture: Capture? = {
        guard let pending else { return nil }
        func rgb(_ index: Int) -> RGBImage {
            let halves = pending.downloads[index].raw.bindMemory(to: UInt16.self)
            let (width, height) = pending.sizes[index]
            return RGBImage(width: width, height: height, pixels: (0..<(width * height)).map { pixel in
                SIMD3((0..<3).map { Float(Float16(bitPattern: halves[pixel * 4 + $0])) }.map { min(max($0, 0), 1) })
            })
        }
        func plane(_ index: Int) -> PlaneImage {
            PlaneImage(downloaded: pending.downloads[index], width: pending.sizes[index].0, height: pending.sizes[index].1)
        }
        return Capture(frameIndex: pending.index, input: rgb(0), a: rgb(1), b: rgb(2), weightsA: plane(3), weightsB: plane(4),
                       personMask: plane(5), faces: pending.faces)
    }()

    private func sideImages(like image: GPUImage) throws -> (GPUImage, GPUImage) {
        if let sides, sides.0.width == image.width, sides.0.height == image.height { return sides }
        let made = (try GPUImage(context: context, width: image.width, height: image.height, format: image.format),
                    try GPUImage(context: context, width: image.width, height: image.height, format: image.format))
        sides = made
        return made
    }
}
