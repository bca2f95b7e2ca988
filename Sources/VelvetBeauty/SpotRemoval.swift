import VelvetGPU
import VelvetKernels

/// Stage 2: spot removal at two scales (see `beauty_spots.comp`). Writes the spot-fixed
/// image (rgb, alpha = fill weight) over the region of interest; it is the input of the
/// smoothing and the base of the blend.
///
/// Bounds that keep it from eating features: it acts only where the mask's spot
/// permission allows (inside the face oval, fading out before its outline, outside eyes,
/// brows, lips and the whole nose, each grown as for the mask holes); a blob counts only
/// when it is darker than the ring around it by `spotThreshold`, enclosed by it (all ring
/// samples but the darkest brighter, which a wrinkle or shadow edge crossing the ring is
/// not), the ring is even next to the contrast (`spotRingSpread`) and the contrast stays
/// below `spotContrastCap` (a mole-dark mark is kept); a fill lifts luma by at most
/// `spotMaxLift`. Blobs wider than about the coarse radius fail the ring test, which caps
/// their size. There is no cap on the number of spots (no per-blob count on the GPU).
final class SpotRemoval {
    private let kernel: ComputeKernel

    init(context: GPUContext) throws {
        kernel = try ComputeKernel(context: context, source: KernelLibrary.beautySpots)
    }

    func record(on recorder: CommandRecorder, source: GPUImage, mask: GPUImage, destination: GPUImage,
                region: PixelRegion, faceSize: Float, settings: BeautySettings) {
        var push = PushConstants()
        push.ivec2(Int32(region.x), Int32(region.y))
        push.ivec2(Int32(region.width), Int32(region.height))
        let inverse = source.inverseSize
        push.vec2(inverse.0, inverse.1)
        push.float(max(1, settings.spotFineRadius * faceSize))
        push.float(max(2, settings.spotCoarseRadius * faceSize))
        push.float(settings.spotThreshold)
        push.float(settings.spotContrastCap)
        push.float(settings.spotRingSpread)
        push.float(settings.spotMaxLift)
        push.float(settings.spotRemoval)
        recorder.dispatch(kernel, [.sampledImage(source, .linear), .sampledImage(mask, .linear), .storageImage(destination)],
                          push: push, covering: region.width, region.height)
    }
}
