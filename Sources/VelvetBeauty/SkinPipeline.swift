import VelvetGPU
import VelvetKernels

/// What one recorded frame produced. The images belong to the pipeline and are reused by
/// the next `record` call: read or copy them (after the submission completed) before that.
public struct SkinFrame {
    /// The beautified frame (same size and format as the input).
    public let output: GPUImage
    /// The mask image at mask resolution: r = skin, g = zone intensity, b = spot permission.
    public let mask: GPUImage?
    /// The smoothed image before the blend (valid inside `region`), when smoothing ran.
    public let processed: GPUImage?
    /// The final blend weight per frame pixel (r16f), when `SkinPipeline.capturesWeights`.
    public let weights: GPUImage?
    /// The spot-fixed frame (rgb; a = fill weight, 0 where nothing was filled), when the
    /// skin stages ran.
    public let spots: GPUImage?
    /// Frame pixels the skin stages worked on; empty when nothing could change.
    public let region: PixelRegion
    /// The part of `region` the blend may have changed: where the mask reaches (the
    /// smoothing's margin around it is read, never changed).
    public let changed: PixelRegion
    /// The faces treated, in the mask's order (largest first), and the settings they got.
    let faces: [BeautyFace]
    let settings: BeautySettings
}

/// A frame's skin stages up to the blend (`SkinPipeline.front`): its mask, spot-fixed and
/// smoothed images and the strength fit's gains, kept until `SkinPipeline.back` blends it.
public struct SkinFront {
    let width: Int
    let height: Int
    let settings: BeautySettings
    let geometry: SkinMaskGeometry
    /// nil: nothing could change (no face in reach, or every strength 0).
    let mask: SkinMask.Output?
    let spotFixed: GPUImage?
    let processed: GPUImage?
    /// Per face (`StrengthFit.resultStride` floats, in `geometry`'s face order).
    var gains: GPUBuffer?
    /// Frame pixels the skin stages worked on.
    let region: PixelRegion
}

/// What the output achieved on one face, measured on the GPU in the metrics' own discs:
/// M5 (blotches kept), M6 (pores kept) and M8 (the worse cheek's mean colour change);
/// nil where a disc fell outside the frame.
public struct FaceSkinQuality: Sendable, Equatable {
    public var face: BeautyFace
    public var midBandRatio: Double?
    public var fineBandRatio: Double?
    public var colourShift: Double?
}

/// A frame's quality measurement on its way back from the GPU.
public struct PendingSkinQuality: @unchecked Sendable {
    let readback: GPUReadback
    let faces: [BeautyFace]

    /// The figures per face; valid once the frame's submission completed.
    public func resolve() -> [FaceSkinQuality] {
        zip(faces, StrengthFit.achieved(readback, faceCount: faces.count)).map { face, achieved in
            FaceSkinQuality(face: face, midBandRatio: achieved.midBandRatio, fineBandRatio: achieved.fineBandRatio,
                            colourShift: achieved.colourShift)
        }
    }
}

/// The skin pipeline for one frame: mask + zones, spot removal, smoothing (bilateral or
/// frequency separation), strength fit and blend, all recorded on the caller's
/// `CommandRecorder` with one timed section per part (`SkinPipeline.Section`). In the chain
/// it is `SkinStage`, followed by `SharpenStage` and `SkinQualityStage`.
///
/// Input: the working image (rgba8 or rgba16f, top-left origin), the faces' mesh
/// geometry in the same pixel coordinates, and the person probability (r16f/r32f at any
/// resolution, stretched over the frame; nil means "person everywhere"). Every face is
/// treated, each at its own scale. A frame without faces, or with every strength at 0,
/// comes out bit-exact.
public final class SkinPipeline {
    /// Timed section labels, in recording order.
    public enum Section {
        public static let mask = "skin.mask"
        public static let spots = "skin.spots"
        public static let smoothing = "skin.smoothing"
        public static let fit = "skin.fit"
        public static let blend = "skin.blend"
        public static let sharpen = "skin.sharpen"
        public static let measure = "skin.measure"
        public static let all = [mask, spots, smoothing, fit, blend, sharpen, measure]
    }

    public let context: GPUContext
    /// Also write the final blend weight per pixel (for tests and the A/B report).
    public var capturesWeights = false
    /// Run on every face even where strength and spot removal are 0, which otherwise leave the
    /// frame as it is untouched: a debug view draws the mask, zones or spots whatever they are.
    public var showsMaps = false

    fileprivate let pool: ImagePool
    private let skinMask: SkinMask
    private let spots: SpotRemoval
    private let bilateral: BilateralSmoothing
    private let frequencySeparation: FrequencySeparation
    private let blend: SkinBlend
    private let dummy: GPUImage
    fileprivate let ownedCopy: TypedKernel<KernelLibrary.BeautyOwnedCopyPush>
    private let strengthFit: StrengthFit
    private let toneKeeping: ToneKeeping
    private let zeroGains: GPUBuffer

    /// Spot candidates the last face recorded listed (tests; read after its submission).
    func spotCandidateCount() throws -> Int {
        try spots.candidateCount()
    }

    public convenience init(context: GPUContext) throws {
        try self.init(context: context, blendCopiesOutside: nil)
    }

    /// `blendCopiesOutside`: how the blend copies what it leaves (`SkinBlend`);
    /// `faceTableTexels`: how the mask and blend read their face table (`FaceTable`). nil:
    /// the device's way; tests run both. `classifiesEverySpotPixel`: spot removal's full test
    /// runs on every permitted pixel (`SpotRemoval`; tests compare).
    init(context: GPUContext, blendCopiesOutside: Bool?, faceTableTexels: Bool? = nil, classifiesEverySpotPixel: Bool = false) throws {
        self.context = context
        pool = ImagePool(context: context)
        let blurs = try BlurCache(context: context)
        skinMask = try SkinMask(context: context, pool: pool, blurs: blurs, faceTableTexels: faceTableTexels)
        spots = try SpotRemoval(context: context, pool: pool, classifiesAll: classifiesEverySpotPixel)
        bilateral = try BilateralSmoothing(context: context, pool: pool)
        frequencySeparation = try FrequencySeparation(context: context, pool: pool, blurs: blurs)
        blend = try SkinBlend(context: context, copiesOutside: blendCopiesOutside, faceTableTexels: faceTableTexels)
        dummy = try GPUImage(context: context, width: 1, height: 1, format: .r16f)
        ownedCopy = try TypedKernel(context: context)
        strengthFit = try StrengthFit(context: context, pool: pool)
        toneKeeping = try ToneKeeping(context: context, pool: pool)
        zeroGains = try GPUBuffer(context: context, size: 64)
    }

    /// Records every stage for one frame. `destination`, when given, receives the output
    /// (same size and format as `image`); otherwise a pipeline-owned image does.
    /// `userMatte` (frame size, 0...1 in r), when given, multiplies the blend weight and the
    /// spot fills: where it is 0 the frame is kept bit-exact.
    public func record(on recorder: CommandRecorder, image: GPUImage, faces: [BeautyFace], personMask: GPUImage?,
                       settings: BeautySettings, destination: GPUImage? = nil, userMatte: GPUImage? = nil) throws -> SkinFrame {
        let front = try self.front(on: recorder, image: image, faces: faces, personMask: personMask, settings: settings)
        return try back(on: recorder, front: front, image: image, destination: destination, userMatte: userMatte)
    }

    /// Records the stages before the blend for one frame: mask, spot removal, smoothing and
    /// the strength fit's measurement. Frames go through `front` in order. `slot`: the set of
    /// kept images it writes (nil: the pipeline's one set), so that a front recorded frames
    /// ahead of its blend (`SkinStage.recordFront`) is not overwritten by the frames between;
    /// its gains are then the frame's own, for `GainWindow` to average (with nil, averaged
    /// over the frames before, `MeasurementMemory`).
    public func front(on recorder: CommandRecorder, image: GPUImage, faces: [BeautyFace], personMask: GPUImage?,
                      settings: BeautySettings, slot: Int? = nil) throws -> SkinFront {
        let settings = try settings.validated()
        guard image.format == .rgba8 || image.format == .rgba16f else {
            throw BeautyError.invalidImage("the working image must be rgba8 or rgba16f, got \(image.format)")
        }
        if let personMask, personMask.format != .r16f && personMask.format != .r32f {
            throw BeautyError.invalidImage("the person mask must be r16f or r32f, got \(personMask.format)")
        }
        let width = image.width, height = image.height
        let kept = slot.map { "#\($0)" } ?? ""
        let geometry = SkinMaskGeometry(faces: faces, settings: settings, frameWidth: width, frameHeight: height)
        let active = !geometry.reach.isEmpty && (settings.strength > 0 || settings.spotRemoval > 0 || showsMaps)
        guard active else {
            strengthFit.skip()
            spots.skipFrame()
            return SkinFront(width: width, height: height, settings: settings, geometry: geometry, mask: nil, spotFixed: nil,
                             processed: nil, gains: nil, region: PixelRegion(x: 0, y: 0, width: 0, height: 0))
        }
        // Each face's region: its reach grown by what its smoothing reads around it.
        let regions = geometry.faces.map { reach in
            let margin = Int((3 * BilateralSmoothing.spatialSigma(settings: settings, faceSize: reach.face.faceSize))
                .rounded(.up)) + 2
            return reach.region.grown(by: margin, width: width, height: height)
        }
        var region = geometry.reach.grown(by: 0, width: width, height: height)
        for face in regions where !face.isEmpty { region = region.union(face) }

        recorder.beginSection(Section.mask)
        let maskOutput = try skinMask.record(on: recorder, frameWidth: width, frameHeight: height, geometry: geometry,
                                             personMask: personMask, settings: settings, keptAs: kept)
        let maskImage = maskOutput.mask
        // The spot and smoothing scales follow each face's size: with several faces each
        // runs over its face's region into a scratch image, and the pixels the face owns
        // are copied into the frame's image.
        let perFace = PerFaceStage(pipeline: self, owner: maskOutput.owner, regions: regions,
                                   faces: geometry.faces.map(\.face))

        recorder.beginSection(Section.spots)
        let spotFixed = try pool.image("skin.spotFixed" + kept, width: width, height: height, format: .rgba16f)
        try spots.beginFrame(width: width, height: height)
        try perFace.record(on: recorder, into: spotFixed, scratchName: "skin.spotFace") { target, area, face in
            try spots.record(on: recorder, source: image, mask: maskImage, destination: target, region: area,
                             ovals: geometry.ovals, face: face, faceCount: 1, settings: settings)
        }

        recorder.beginSection(Section.smoothing)
        var smoothed = spotFixed
        if settings.strength > 0 {
            let target = try pool.image("skin.processed" + kept, width: width, height: height, format: .rgba16f)
            var wrote = false
            try perFace.record(on: recorder, into: target, scratchName: "skin.processedFace") { destination, area, face in
                let faceSize = face.faceSize
                switch settings.smoothing {
                case .bilateral:
                    if try !bilateral.record(on: recorder, source: spotFixed, mask: maskImage, destination: destination,
                                             region: area, faceSize: faceSize, settings: settings) {
                        // A radius under half a pixel smooths nothing: the face keeps its spot-fixed pixels.
                        try recorder.copy(spotFixed, to: destination)
                    }
                case .frequencySeparation:
                    try frequencySeparation.record(on: recorder, source: spotFixed, mask: maskImage, destination: destination,
                                                   region: area, faceSize: faceSize, settings: settings)
                }
                try toneKeeping.record(on: recorder, processed: destination, start: spotFixed, mask: maskImage, region: area,
                                       faceSize: faceSize, settings: settings)
                wrote = true
            }
            if wrote { smoothed = target }
        }

        var gains: GPUBuffer?
        if smoothed !== spotFixed {
            recorder.beginSection(Section.fit)
            gains = try strengthFit.record(on: recorder, input: image, spotFixed: spotFixed, processed: smoothed,
                                           mask: maskImage, faces: geometry.faces.map(\.face), settings: settings,
                                           averagedOverFrames: slot == nil)
        } else {
            strengthFit.skip()
        }
        recorder.endSection()
        return SkinFront(width: width, height: height, settings: settings, geometry: geometry, mask: maskOutput,
                         spotFixed: spotFixed, processed: smoothed, gains: gains, region: region)
    }

    /// Records the blend of a frame whose `front` was recorded (on this recorder or an
    /// earlier one): `image` is that frame's working image. `destination`, `userMatte`: as
    /// `record`'s.
    public func back(on recorder: CommandRecorder, front: SkinFront, image: GPUImage, destination: GPUImage? = nil,
                     userMatte: GPUImage? = nil) throws -> SkinFrame {
        let width = image.width, height = image.height
        guard width == front.width, height == front.height else {
            throw BeautyError.invalidImage("the frame's image must have its front's size")
        }
        if let destination, destination.width != width || destination.height != height || destination.format != image.format {
            throw BeautyError.invalidImage("destination must match the input's size and format")
        }
        if let userMatte, userMatte.width != width || userMatte.height != height {
            throw BeautyError.invalidImage("the user's matte must have the frame's size")
        }
        let blended = try destination ?? pool.image("skin.output", width: width, height: height, format: image.format)
        let weights = capturesWeights ? try pool.image("skin.weights", width: width, height: height, format: .r16f) : nil
        var changed = front.region
        recorder.beginSection(Section.blend)
        if let maskOutput = front.mask, let spotFixed = front.spotFixed, let smoothed = front.processed {
            // Mask texels outside the faces' reach are 0 (SkinMaskGeometry), and a frame pixel's
            // bilinear taps lie within one mask pixel of it: beyond that the blend keeps the original.
            changed = front.geometry.reach.grown(by: maskOutput.factor + 2, width: width, height: height).intersection(front.region)
            try blend.record(on: recorder, original: image, spotFixed: spotFixed, processed: smoothed, mask: maskOutput.mask,
                             destination: blended, weights: weights, dummy: dummy, region: changed,
                             geometry: maskOutput.geometry, faceCount: front.geometry.faceCount, gains: front.gains,
                             edgeReach: front.settings.smoothingReach, userMatte: userMatte)
        } else {
            // Nothing can change: the blend with an empty region copies the frame exactly.
            try blend.record(on: recorder, original: image, spotFixed: image, processed: image, mask: dummy,
                             destination: blended, weights: weights, dummy: dummy, region: front.region,
                             geometry: zeroGains, faceCount: 0, gains: nil, edgeReach: 0, userMatte: nil)
        }
        recorder.endSection()
        return SkinFrame(output: blended, mask: front.mask?.mask, processed: front.processed, weights: weights,
                         spots: front.spotFixed, region: front.region, changed: changed,
                         faces: front.geometry.faces.map(\.face), settings: front.settings)
    }

    /// Records the measurement of what `output` achieved on `skin`'s faces against `input`
    /// (M5, M6, M8 in the metrics' own discs); nil when the skin stages did not run.
    func measure(on recorder: CommandRecorder, input: GPUImage, output: GPUImage, skin: SkinFrame) throws -> PendingSkinQuality? {
        guard let mask = skin.mask, !skin.faces.isEmpty else { return nil }
        return PendingSkinQuality(readback: try strengthFit.measure(on: recorder, input: input, output: output, mask: mask,
                                                                    faces: skin.faces, settings: skin.settings),
                                  faces: skin.faces)
    }
}

/// The skin pipeline as the chain's first stage: mask, spots, smoothing, fit and blend
/// through the skin mask (the user's matte applied inside the blend). It leaves its mask,
/// weights and spot image on the frame for the stages, views and sidecars after it.
/// A render that looks ahead may record frames' fronts ahead of their blends
/// (`recordFront`): a frame's stage then blends the oldest front waiting.
public final class SkinStage: BeautyStage {
    public let pipeline: SkinPipeline
    public let settings: BeautySettings
    /// Fronts recorded ahead, oldest first, one per frame not yet blended.
    private var fronts: [SkinFront] = []
    /// Fronts recorded ahead so far (their kept images are taken in turn).
    private var frontsRecorded = 0
    /// The fronts' gains, averaged over the frames around each (made with the first front).
    private var gainWindow: GainWindow?

    public init(pipeline: SkinPipeline, settings: BeautySettings) throws {
        self.pipeline = pipeline
        self.settings = try settings.validated()
    }

    public var section: String? { nil }
    /// Idle only when nothing of it could change a frame (a debug view of its mask still needs it).
    public var isIdle: Bool { false }
    public var appliesUserMatte: Bool { true }

    /// Records the front of the next frame (frames in order) ahead of its blend, `lead`
    /// frames at most before the frame's own `record`; `image` is that frame's working image.
    public func recordFront(on recorder: CommandRecorder, image: GPUImage, faces: [BeautyFace], personMask: GPUImage?,
                            lead: Int) throws {
        guard fronts.count <= lead else { throw BeautyError.invalidSettings("skin fronts recorded more than \(lead) frames ahead") }
        // Lead + 1 sets: the fronts waiting, and the one being recorded in the set of the
        // frame blended last (its blend is recorded before, so it runs before on the GPU).
        let front = try pipeline.front(on: recorder, image: image, faces: faces, personMask: personMask, settings: settings,
                                       slot: frontsRecorded % (lead + 1))
        let window = try gainWindow ?? GainWindow(context: pipeline.context, lead: lead)
        gainWindow = window
        window.add(results: front.gains, keys: front.geometry.faces.map { .of($0.face, part: 0) })
        fronts.append(front)
        frontsRecorded += 1
    }

    public func record(on recorder: CommandRecorder, source: GPUImage, destination: GPUImage, frame: StageFrame) throws -> StageResult {
        let skin: SkinFrame
        if fronts.isEmpty {
            skin = try pipeline.record(on: recorder, image: source, faces: frame.faces, personMask: frame.personMask,
                                       settings: settings, destination: destination, userMatte: frame.userMatte)
        } else {
            var front = fronts.removeFirst()
            if let gainWindow {
                recorder.beginSection(SkinPipeline.Section.fit)
                front.gains = try gainWindow.record(on: recorder)
            }
            skin = try pipeline.back(on: recorder, front: front, image: source, destination: destination, userMatte: frame.userMatte)
        }
        frame.skin = skin
        return .wrote(skin.changed)
    }
}

/// Runs a size-dependent stage once per face, each at its face's size over its region. One
/// face writes the frame's image directly; with more, each writes a scratch image and the
/// pixels it owns (the mask's owner image) are copied over (`beauty_owned_copy.comp`).
private struct PerFaceStage {
    let pipeline: SkinPipeline
    let owner: GPUImage
    let regions: [PixelRegion]
    let faces: [BeautyFace]

    func record(on recorder: CommandRecorder, into target: GPUImage, scratchName: String,
                stage: (_ destination: GPUImage, _ region: PixelRegion, _ face: BeautyFace) throws -> Void) throws {
        guard regions.count > 1 else {
            if !regions[0].isEmpty { try stage(target, regions[0], faces[0]) }
            return
        }
        let scratch = try pipeline.pool.image(scratchName, width: target.width, height: target.height, format: target.format)
        for (index, region) in regions.enumerated() where !region.isEmpty {
            try stage(scratch, region, faces[index])
            let inverse = target.inverseSize
            let push = KernelLibrary.BeautyOwnedCopyPush(origin: SIMD2(Int32(region.x), Int32(region.y)),
                                                         size: SIMD2(Int32(region.width), Int32(region.height)),
                                                         inverseFrame: SIMD2(inverse.0, inverse.1), face: Int32(index))
            recorder.dispatch(pipeline.ownedCopy, [.sampledImage(scratch, .nearest), .sampledImage(owner, .nearest),
                                                   .storageImage(target)],
                              push: push, covering: region.width, region.height)
        }
    }
}
