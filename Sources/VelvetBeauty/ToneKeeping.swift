import VelvetGPU
import VelvetKernels

/// After either smoothing: the skin keeps its tone. The mean of the change the smoothing
/// made over every box of half-width `toneRadius` x face size around a pixel (a
/// skin-weighted box mean, a normalised convolution) is taken back, so what remains evens
/// out blotches, wrinkles and uneven grain (quality metric M5's band and below) while no
/// patch of skin that size changes its mean colour or brightness (M8). A box, not a
/// Gaussian: its mean is what a patch's colour is, and it leaves the finer change alone.
final class ToneKeeping {
    private let downsample: TypedKernel<KernelLibrary.BeautyNcDownsamplePush>
    private let boxMean: TypedKernel<KernelLibrary.BeautyBoxMeanPush>
    private let correct: TypedKernel<KernelLibrary.BeautyToneCorrectPush>
    private let pool: ImagePool

    /// Box radius in grid samples: the grid is as coarse as keeps this many per radius.
    static let samplesPerRadius = 4

    init(context: GPUContext, pool: ImagePool) throws {
        self.pool = pool
        boxMean = try TypedKernel(context: context)
        downsample = try TypedKernel(context: context, specialization: ["SUBTRACT": .int(1)])
        correct = try TypedKernel(context: context)
    }

    /// Corrects `processed` (the smoothed image, over `region`) in place against `start`.
    func record(on recorder: CommandRecorder, processed: GPUImage, start: GPUImage, mask: GPUImage, region: PixelRegion,
                faceSize: Float, settings: BeautySettings) throws {
        let radius = settings.toneRadius * faceSize
        guard radius > 0, !region.isEmpty else { return }
        let width = processed.width, height = processed.height
        let scale = max(1, Int(radius / Float(Self.samplesPerRadius)))
        let lw = (width + scale - 1) / scale, lh = (height + scale - 1) / scale
        let sums = try pool.image("tone.sums.\(scale)", width: lw, height: lh, format: .rgba16f)
        let blurred = try pool.image("tone.blurred.\(scale)", width: lw, height: lh, format: .rgba16f)
        let scratch = try pool.image("tone.scratch.\(scale)", width: lw, height: lh, format: .rgba16f)
        let inverse = processed.inverseSize
        let push = KernelLibrary.BeautyNcDownsamplePush(
            origin: SIMD2(Int32(region.x), Int32(region.y)), size: SIMD2(Int32(region.width), Int32(region.height)),
            lowSize: SIMD2(Int32(lw), Int32(lh)), factor: Int32(scale), inverseFrame: SIMD2(inverse.0, inverse.1))
        recorder.dispatch(downsample, [.sampledImage(processed, .nearest), .sampledImage(mask, .linear),
                                       .sampledImage(start, .nearest), .storageImage(sums)],
                          push: push, covering: lw, lh)
        let steps = max(1, Int((radius / Float(scale)).rounded()))
        for (source, target, vertical) in [(sums, scratch, 0), (scratch, blurred, 1)] {
            let boxPush = KernelLibrary.BeautyBoxMeanPush(size: SIMD2(Int32(lw), Int32(lh)), vertical: Int32(vertical), radius: Int32(steps))
            recorder.dispatch(boxMean, [.sampledImage(source, .nearest), .storageImage(target)], push: boxPush, covering: lw, lh)
        }
        let correctPush = KernelLibrary.BeautyToneCorrectPush(
            origin: SIMD2(Int32(region.x), Int32(region.y)), size: SIMD2(Int32(region.width), Int32(region.height)),
            inverseFrame: SIMD2(inverse.0, inverse.1), inverseGrid: SIMD2(1 / Float(lw * scale), 1 / Float(lh * scale)))
        recorder.dispatch(correct, [.sampledImage(blurred, .linear), .sampledImage(mask, .linear), .storageImage(processed)],
                          push: correctPush, covering: region.width, region.height)
    }
}
