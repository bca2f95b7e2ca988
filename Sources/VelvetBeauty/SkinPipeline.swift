import VelvetGPU

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
}

/// The skin pipeline for one frame: mask + zones, spot removal, smoothing (bilateral or
/// frequency separation), blend, optional sharpen, all recorded on the caller's
/// `CommandRecorder` with one timed section per stage (`SkinPipeline.sections`).
///
/// Input: the working image (rgba8 or rgba16f, top-left origin), the faces' mesh
/// geometry in the same pixel coordinates, and the person probability (r16f/r32f at any
/// resolution, stretched over the frame; nil means "person everywhere"). Up to 4 faces
/// (the largest) are used. A frame without faces, or with every strength at 0, comes out
/// bit-exact.
public final class SkinPipeline {
    /// Timed section labels, in recording order.
    public enum Section {
        public static let mask = "skin.mask"
        public static let spots = "skin.spots"
        public static let smoothing = "skin.smoothing"
        public static let blend = "skin.blend"
        public static let sharpen = "skin.sharpen"
        public static let all = [mask, spots, smoothing, blend, sharpen]
    }

    public let context: GPUContext
    /// Also write the final blend weight per pixel (for tests and the A/B report).
    public var capturesWeights = false

    private let pool: ImagePool
    private let skinMask: SkinMask
    private let spots: SpotRemoval
    private let bilateral: BilateralSmoothing
    private let frequencySeparation: FrequencySeparation
    private let blend: SkinBlend
    private let sharpen: GlobalSharpen
    private let dummy: GPUImage

    public init(context: GPUContext) throws {
        self.context = context
        pool = ImagePool(context: context)
        let blurs = try BlurCache(context: context)
        skinMask = try SkinMask(context: context, pool: pool, blurs: blurs)
        spots = try SpotRemoval(context: context)
        bilateral = try BilateralSmoothing(context: context, pool: pool)
        frequencySeparation = try FrequencySeparation(context: context, pool: pool, blurs: blurs)
        blend = try SkinBlend(context: context)
        sharpen = try GlobalSharpen(context: context)
        dummy = try GPUImage(context: context, width: 1, height: 1, format: .r16f)
    }

    /// Records every stage for one frame. `destination`, when given, receives the output
    /// (same size and format as `image`); otherwise a pipeline-owned image does.
    public func record(on recorder: CommandRecorder, image: GPUImage, faces: [BeautyFace], personMask: GPUImage?,
                       settings: BeautySettings, destination: GPUImage? = nil) throws -> SkinFrame {
        let settings = try settings.validated()
        guard image.format == .rgba8 || image.format == .rgba16f else {
            throw BeautyError.invalidImage("the working image must be rgba8 or rgba16f, got \(image.format)")
        }
        if let destination, destination.width != image.width || destination.height != image.height
            || destination.format != image.format {
            throw BeautyError.invalidImage("destination must match the input's size and format")
        }
        if let personMask, personMask.format != .r16f && personMask.format != .r32f {
            throw BeautyError.invalidImage("the person mask must be r16f or r32f, got \(personMask.format)")
        }
        let width = image.width, height = image.height
        let wantsSharpen = settings.sharpen > 0
        let blended = wantsSharpen ? try pool.image("skin.blended", width: width, height: height, format: image.format)
            : try destination ?? pool.image("skin.output", width: width, height: height, format: image.format)
        let weights = capturesWeights ? try pool.image("skin.weights", width: width, height: height, format: .r16f) : nil

        let geometry = SkinMaskGeometry(faces: faces, settings: settings, frameWidth: width, frameHeight: height)
        let active = geometry.faceCount > 0 && (settings.strength > 0 || settings.spotRemoval > 0)
        var mask: GPUImage? = nil
        var processed: GPUImage? = nil
        var spotImage: GPUImage? = nil
        var region = PixelRegion(x: 0, y: 0, width: 0, height: 0)
        if active {
            let faceSize = geometry.largestFaceSize
            let margin = Int((3 * BilateralSmoothing.spatialSigma(settings: settings, faceSize: faceSize)).rounded(.up)) + 2
            region = geometry.reach.grown(by: margin, width: width, height: height)

            recorder.beginSection(Section.mask)
            let maskImage = try skinMask.record(on: recorder, frameWidth: width, frameHeight: height, geometry: geometry,
                                                personMask: personMask, settings: settings)
            mask = maskImage

            recorder.beginSection(Section.spots)
            let spotFixed = try pool.image("skin.spotFixed", width: width, height: height, format: .rgba16f)
            try spots.record(on: recorder, source: image, mask: maskImage, destination: spotFixed, region: region,
                             faceSize: faceSize, faceCount: geometry.faceCount, settings: settings)
            spotImage = spotFixed

            recorder.beginSection(Section.smoothing)
            var smoothed = spotFixed
            if settings.strength > 0 {
                let target = try pool.image("skin.processed", width: width, height: height, format: .rgba16f)
                switch settings.smoothing {
                case .bilateral:
                    if try bilateral.record(on: recorder, source: spotFixed, mask: maskImage, destination: target,
                                            region: region, faceSize: faceSize, settings: settings) {
                        smoothed = target
                    }
                case .frequencySeparation:
                    try frequencySeparation.record(on: recorder, source: spotFixed, mask: maskImage, destination: target,
                                                   region: region, faceSize: faceSize, settings: settings)
                    smoothed = target
                }
            }
            processed = smoothed

            recorder.beginSection(Section.blend)
            blend.record(on: recorder, original: image, spotFixed: spotFixed, processed: smoothed, mask: maskImage,
                         destination: blended, weights: weights, dummy: dummy, region: region, strength: settings.strength)
        } else {
            // Nothing can change: the blend with an empty region copies the frame exactly.
            recorder.beginSection(Section.blend)
            blend.record(on: recorder, original: image, spotFixed: image, processed: image, mask: dummy,
                         destination: blended, weights: weights, dummy: dummy, region: region, strength: 0)
        }
        var output = blended
        if wantsSharpen {
            recorder.beginSection(Section.sharpen)
            output = try destination ?? pool.image("skin.output", width: width, height: height, format: image.format)
            sharpen.record(on: recorder, source: blended, destination: output, amount: settings.sharpen)
        }
        recorder.endSection()
        return SkinFrame(output: output, mask: mask, processed: processed, weights: weights, spots: spotImage, region: region)
    }
}
