import Foundation
import VelvetGPU
import VelvetKernels

/// Frequency-separation smoothing: split the image I into a low layer B (a small
/// Gaussian, sigma baseSigma x face size, over the skin only: a normalised convolution
/// weighted by the skin mask) and a high layer I - B (pores, grain); smooth
/// only the low layer, with a mask-aware low-pass S (normalised convolution weighted by the
/// skin mask, sigma lowPassSigma x face size) so neither background nor eyes and lips bleed
/// into the skin; recombine as B + guard x (S - B) + detail x (I - B)
/// (`beauty_freqsep_combine.comp`).
///
/// Both Gaussians run at reduced resolution: the frame divided by
/// max(1, floor(sigma / 2.5)), where the blur is 2.5...5 px wide; it is that wide
/// Gaussian's own smoothness that makes the coarse grid lossless. A low layer under 5 px
/// wide (factor 1: faces under 625 px at the default baseSigma) is the exact separable FIR
/// over the region.
final class FrequencySeparation {
    private let weigh: TypedKernel<KernelLibrary.BeautySkinWeighPush>
    private let baseBlur: TypedKernel<KernelLibrary.BeautyRoiBlurPush>
    private let baseBlurRun: Int
    private let downsample: TypedKernel<KernelLibrary.BeautyNcDownsamplePush>
    private let combine: TypedKernel<KernelLibrary.BeautyFreqsepCombinePush>
    private let combineFromGrid: TypedKernel<KernelLibrary.BeautyFreqsepCombinePush>
    private let pool: ImagePool
    private let blurs: BlurCache
    /// false: B at frame resolution whatever its width (the exact FIR the grid stands in for; tests).
    var basesOnGrid = true

    init(context: GPUContext, pool: ImagePool, blurs: BlurCache) throws {
        self.pool = pool
        self.blurs = blurs
        weigh = try TypedKernel(context: context)
        // A run of outputs per invocation on CPU devices (beauty_roi_blur.comp's RUN).
        baseBlurRun = context.device.kind == .cpu ? 8 : 1
        baseBlur = try TypedKernel(context: context, specialization: ["RUN": .int(Int32(baseBlurRun))])
        downsample = try TypedKernel(context: context)
        combine = try TypedKernel(context: context)
        combineFromGrid = try TypedKernel(context: context, specialization: ["BASE_ON_GRID": .int(1)])
    }

    /// The grid factor for a Gaussian of `sigma` frame pixels: the blur stays 2.5...5 grid pixels wide.
    static func gridFactor(sigma: Float) -> Int { max(1, Int(sigma / 2.5)) }

    func record(on recorder: CommandRecorder, source: GPUImage, mask: GPUImage, destination: GPUImage,
                region: PixelRegion, faceSize: Float, settings: BeautySettings) throws {
        guard !region.isEmpty else { return }
        let width = source.width, height = source.height
        let inverse = source.inverseSize
        // Low layer B: a Gaussian over the skin (sigma baseSigma x face size), as
        // normalised-convolution sums (rgb * m, m).
        let baseSigma = max(0.5, settings.baseSigma * faceSize)
        let base = try recordBase(on: recorder, source: source, mask: mask, region: region, sigma: baseSigma)

        // Smoothed low layer S: normalised convolution at reduced resolution.
        let lowSigma = settings.lowPassSigma * faceSize
        let scale = Self.gridFactor(sigma: lowSigma)
        let lw = (width + scale - 1) / scale, lh = (height + scale - 1) / scale
        // Pooled per grid factor: faces of other sizes in one frame use other grids.
        let sums = try pool.image("freqsep.sums.\(scale)", width: lw, height: lh, format: .rgba16f)
        let blurred = try pool.image("freqsep.blurred.\(scale)", width: lw, height: lh, format: .rgba16f)
        let scratch = try pool.image("freqsep.scratch.\(scale)", width: lw, height: lh, format: .rgba16f)
        recordSums(on: recorder, source: source, mask: mask, area: region, factor: scale, into: sums)
        try blurs.record(on: recorder, source: sums, destination: blurred, scratch: scratch, sigma: lowSigma / Float(scale))

        let combinePush = KernelLibrary.BeautyFreqsepCombinePush(
            origin: SIMD2(Int32(region.x), Int32(region.y)), size: SIMD2(Int32(region.width), Int32(region.height)),
            inverseFrame: SIMD2(inverse.0, inverse.1), detail: settings.detail,
            guardFactor: -1 / (2 * settings.guardRange * settings.guardRange), chroma: settings.chromaSmoothing,
            // The grid spans scale x its size frame pixels, a little more than the frame.
            inverseGrid: SIMD2(1 / Float(lw * scale), 1 / Float(lh * scale)),
            inverseBaseGrid: base.inverseGrid)
        recorder.dispatch(base.onGrid ? combineFromGrid : combine,
                          [.sampledImage(source, .nearest), .sampledImage(base.image, base.onGrid ? .linear : .nearest),
                           .sampledImage(blurred, .linear), .sampledImage(mask, .linear), .storageImage(destination)],
                          push: combinePush, covering: region.width, region.height)
    }

    /// Box sums of (rgb * m, m) over each `factor` x `factor` cell of `area` (frame pixels)
    /// into `sums`, the grid (`beauty_nc_downsample`; cells outside `area` are zero).
    private func recordSums(on recorder: CommandRecorder, source: GPUImage, mask: GPUImage, area: PixelRegion,
                            factor: Int, into sums: GPUImage) {
        let inverse = source.inverseSize
        let push = KernelLibrary.BeautyNcDownsamplePush(
            origin: SIMD2(Int32(area.x), Int32(area.y)), size: SIMD2(Int32(area.width), Int32(area.height)),
            lowSize: SIMD2(Int32(sums.width), Int32(sums.height)), factor: Int32(factor), inverseFrame: SIMD2(inverse.0, inverse.1))
        recorder.dispatch(downsample, [.sampledImage(source, .nearest), .sampledImage(mask, .linear),
                                       .sampledImage(source, .nearest), .storageImage(sums)],
                          push: push, covering: sums.width, sums.height)
    }

    /// B's sums (rgb * m, m): at frame resolution (`onGrid` false) or on a coarse grid read
    /// through a linear sampler, `inverseGrid` mapping frame pixels to its coordinates.
    private struct BaseLayer {
        var image: GPUImage
        var onGrid: Bool
        var inverseGrid: SIMD2<Float>
    }

    private func recordBase(on recorder: CommandRecorder, source: GPUImage, mask: GPUImage, region: PixelRegion,
                            sigma frameSigma: Float) throws -> BaseLayer {
        let width = source.width, height = source.height
        let inverse = source.inverseSize
        let scale = basesOnGrid ? Self.gridFactor(sigma: frameSigma) : 1
        let gridWidth = (width + scale - 1) / scale, gridHeight = (height + scale - 1) / scale
        // On a grid, the box sums (variance s^2/12) and the linear read back (s^2/6) widen the
        // Gaussian: its own sigma is what is left of B's (so B's second moment stays).
        let sigma = scale == 1 ? frameSigma : (frameSigma * frameSigma - Float(scale * scale) / 4).squareRoot() / Float(scale)
        let radius = Int((3 * sigma).rounded(.up))
        // The grid cells the output reads (on a grid, through a linear sampler: one more each
        // side), and everything the blur reads for them: their radius either side.
        let covered = scale == 1 ? region : PixelRegion(
            x: region.x / scale, y: region.y / scale,
            width: (region.x + region.width + scale - 1) / scale - region.x / scale,
            height: (region.y + region.height + scale - 1) / scale - region.y / scale)
            .grown(by: 1, width: gridWidth, height: gridHeight)
        let reach = covered.grown(by: radius, width: gridWidth, height: gridHeight)
        // Sums (rgb * m, m) over the reach: per pixel, or box sums per grid cell (zero outside
        // the reach, which so carries no weight).
        let weighed: GPUImage, horizontal: GPUImage, base: GPUImage
        if scale == 1 {
            weighed = try pool.image("freqsep.weighed", width: width, height: height, format: .rgba32f)
            horizontal = try pool.image("freqsep.horizontal", width: width, height: height, format: .rgba16f)
            base = try pool.image("freqsep.base", width: width, height: height, format: .rgba16f)
            let push = KernelLibrary.BeautySkinWeighPush(
                origin: SIMD2(Int32(reach.x), Int32(reach.y)), size: SIMD2(Int32(reach.width), Int32(reach.height)),
                inverseFrame: SIMD2(inverse.0, inverse.1))
            recorder.dispatch(weigh, [.sampledImage(source, .nearest), .sampledImage(mask, .linear), .storageImage(weighed)],
                              push: push, covering: reach.width, reach.height)
        } else {
            // Pooled per grid factor: faces of other sizes in one frame use other grids.
            weighed = try pool.image("freqsep.baseSums.\(scale)", width: gridWidth, height: gridHeight, format: .rgba32f)
            horizontal = try pool.image("freqsep.baseHorizontal.\(scale)", width: gridWidth, height: gridHeight, format: .rgba32f)
            base = try pool.image("freqsep.base.\(scale)", width: gridWidth, height: gridHeight, format: .rgba32f)
            let inFrame = PixelRegion(x: reach.x * scale, y: reach.y * scale, width: reach.width * scale, height: reach.height * scale)
                .clamped(width: width, height: height) ?? region
            recordSums(on: recorder, source: source, mask: mask, area: inFrame, factor: scale, into: weighed)
        }
        // The separable FIR: the first pass over the rows the second reads.
        let factor = -1 / (2 * sigma * sigma)
        var total: Float = 0
        for d in -radius...radius { total += exp(Float(d * d) * factor) }
        let firstPass = PixelRegion(x: covered.x, y: reach.y, width: covered.width, height: reach.height)
        for (input, output, vertical, area) in [(weighed, horizontal, 0, firstPass), (horizontal, base, 1, covered)] {
            let push = KernelLibrary.BeautyRoiBlurPush(
                origin: SIMD2(Int32(area.x), Int32(area.y)), size: SIMD2(Int32(area.width), Int32(area.height)),
                vertical: Int32(vertical), radius: Int32(radius), factor: factor, normaliser: 1 / total)
            let run = baseBlurRun
            recorder.dispatch(baseBlur, [.sampledImage(input, .nearest), .storageImage(output)], push: push,
                              covering: vertical == 0 ? (area.width + run - 1) / run : area.width,
                              vertical == 0 ? area.height : (area.height + run - 1) / run)
        }
        return BaseLayer(image: base, onGrid: scale > 1,
                         inverseGrid: SIMD2(1 / Float(gridWidth * scale), 1 / Float(gridHeight * scale)))
    }
}
