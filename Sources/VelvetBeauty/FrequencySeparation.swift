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
/// The low-pass runs at reduced resolution: the frame divided by
/// max(1, floor(sigma / 2.5)), where the blur is 2.5...5 px wide; it is that wide
/// Gaussian's own smoothness that makes the coarse grid lossless.
final class FrequencySeparation {
    private let weigh: TypedKernel<KernelLibrary.BeautySkinWeighPush>
    private let baseBlur: TypedKernel<KernelLibrary.BeautyRoiBlurPush>
    private let baseBlurRun: Int
    private let downsample: TypedKernel<KernelLibrary.BeautyNcDownsamplePush>
    private let combine: TypedKernel<KernelLibrary.BeautyFreqsepCombinePush>
    private let pool: ImagePool
    private let blurs: BlurCache

    init(context: GPUContext, pool: ImagePool, blurs: BlurCache) throws {
        self.pool = pool
        self.blurs = blurs
        weigh = try TypedKernel(context: context)
        // A run of outputs per invocation on CPU devices (beauty_roi_blur.comp's RUN).
        baseBlurRun = context.device.kind == .cpu ? 8 : 1
        baseBlur = try TypedKernel(context: context, specialization: ["RUN": .int(Int32(baseBlurRun))])
        downsample = try TypedKernel(context: context)
        combine = try TypedKernel(context: context)
    }

    static func lowFactor(lowPassSigma: Float) -> Int { max(1, Int(lowPassSigma / 2.5)) }

    func record(on recorder: CommandRecorder, source: GPUImage, mask: GPUImage, destination: GPUImage,
                region: PixelRegion, faceSize: Float, settings: BeautySettings) throws {
        guard !region.isEmpty else { return }
        let width = source.width, height = source.height
        // Low layer B: separable Gaussian over the region (the first pass also covers the
        // rows the second pass reads).
        let baseSigma = max(0.5, settings.baseSigma * faceSize)
        let radius = Int((3 * baseSigma).rounded(.up))
        let factor = -1 / (2 * baseSigma * baseSigma)
        var total: Float = 0
        for d in -radius...radius { total += exp(Float(d * d) * factor) }
        let weighed = try pool.image("freqsep.weighed", width: width, height: height, format: .rgba32f)
        let horizontal = try pool.image("freqsep.horizontal", width: width, height: height, format: .rgba16f)
        let base = try pool.image("freqsep.base", width: width, height: height, format: .rgba16f)
        let rowsRegion = PixelRegion(x: region.x, y: region.y, width: region.width, height: region.height)
            .grown(by: radius, width: width, height: height)
        let firstPass = PixelRegion(x: region.x, y: rowsRegion.y, width: region.width, height: rowsRegion.height)
        let inverse = source.inverseSize
        // Everything the first pass reads: the rows it covers, the radius either side.
        let weighPush = KernelLibrary.BeautySkinWeighPush(
            origin: SIMD2(Int32(rowsRegion.x), Int32(rowsRegion.y)), size: SIMD2(Int32(rowsRegion.width), Int32(rowsRegion.height)),
            inverseFrame: SIMD2(inverse.0, inverse.1))
        recorder.dispatch(weigh, [.sampledImage(source, .nearest), .sampledImage(mask, .linear), .storageImage(weighed)],
                          push: weighPush, covering: rowsRegion.width, rowsRegion.height)
        for (input, output, vertical, area) in [(weighed, horizontal, 0, firstPass), (horizontal, base, 1, region)] {
            let push = KernelLibrary.BeautyRoiBlurPush(
                origin: SIMD2(Int32(area.x), Int32(area.y)), size: SIMD2(Int32(area.width), Int32(area.height)),
                vertical: Int32(vertical), radius: Int32(radius), factor: factor, normaliser: 1 / total)
            let run = baseBlurRun
            recorder.dispatch(baseBlur, [.sampledImage(input, .nearest), .storageImage(output)], push: push,
                              covering: vertical == 0 ? (area.width + run - 1) / run : area.width,
                              vertical == 0 ? area.height : (area.height + run - 1) / run)
        }

        // Smoothed low layer S: normalised convolution at reduced resolution.
        let lowSigma = settings.lowPassSigma * faceSize
        let scale = Self.lowFactor(lowPassSigma: lowSigma)
        let lw = (width + scale - 1) / scale, lh = (height + scale - 1) / scale
        // Pooled per grid factor: faces of other sizes in one frame use other grids.
        let sums = try pool.image("freqsep.sums.\(scale)", width: lw, height: lh, format: .rgba16f)
        let blurred = try pool.image("freqsep.blurred.\(scale)", width: lw, height: lh, format: .rgba16f)
        let scratch = try pool.image("freqsep.scratch.\(scale)", width: lw, height: lh, format: .rgba16f)
        let push = KernelLibrary.BeautyNcDownsamplePush(
            origin: SIMD2(Int32(region.x), Int32(region.y)), size: SIMD2(Int32(region.width), Int32(region.height)),
            lowSize: SIMD2(Int32(lw), Int32(lh)), factor: Int32(scale), inverseFrame: SIMD2(inverse.0, inverse.1))
        recorder.dispatch(downsample, [.sampledImage(source, .nearest), .sampledImage(mask, .linear),
                                       .sampledImage(source, .nearest), .storageImage(sums)],
                          push: push, covering: lw, lh)
        try blurs.record(on: recorder, source: sums, destination: blurred, scratch: scratch, sigma: lowSigma / Float(scale))

        let combinePush = KernelLibrary.BeautyFreqsepCombinePush(
            origin: SIMD2(Int32(region.x), Int32(region.y)), size: SIMD2(Int32(region.width), Int32(region.height)),
            inverseFrame: SIMD2(inverse.0, inverse.1), detail: settings.detail,
            guardFactor: -1 / (2 * settings.guardRange * settings.guardRange), chroma: settings.chromaSmoothing,
            // The grid spans scale x its size frame pixels, a little more than the frame.
            inverseGrid: SIMD2(1 / Float(lw * scale), 1 / Float(lh * scale)))
        recorder.dispatch(combine, [.sampledImage(source, .nearest), .sampledImage(base, .nearest),
                                    .sampledImage(blurred, .linear), .sampledImage(mask, .linear), .storageImage(destination)],
                          push: combinePush, covering: region.width, region.height)
    }
}
