import VelvetGPU
import VelvetKernels

/// Stage 4: the composite out = mix(spot-fixed, smoothed, skin x zone x gain) over the
/// region of interest, gain the strength fit's for the face (blended across faces); every other pixel, and every pixel with weight 0 and no spot fill,
/// is the original texel unchanged (bit-exact). Optionally also writes the final weight.
final class SkinBlend {
    private let kernel: TypedKernel<KernelLibrary.BeautyBlendPush>
    private let weightedKernel: TypedKernel<KernelLibrary.BeautyBlendPush>

    init(context: GPUContext) throws {
        kernel = try TypedKernel(context: context)
        weightedKernel = try TypedKernel(context: context, specialization: ["WRITE_WEIGHTS": .int(1)])
    }

    /// - Parameters:
    ///   - geometry: the skin mask's face table; gains: the strength fit's per-face gains in
    ///     the same order (nil: no smoothing, only spot fills).
    ///   - edgeReach: how far (face sizes) the smoothing reads around a pixel: its weight fades
    ///     in over that distance from the frame's edge, where the smoothing's window is cut.
    ///   - userMatte: the user's matte at frame size (0...1 in r), multiplied into the weight.
    func record(on recorder: CommandRecorder, original: GPUImage, spotFixed: GPUImage, processed: GPUImage,
                mask: GPUImage, destination: GPUImage, weights: GPUImage?, dummy: GPUImage,
                region: PixelRegion, geometry: GPUBuffer, faceCount: Int, gains: GPUBuffer?, edgeReach: Float,
                userMatte: GPUImage?) {
        let inverse = original.inverseSize
        let push = KernelLibrary.BeautyBlendPush(
            origin: SIMD2(Int32(region.x), Int32(region.y)), size: SIMD2(Int32(max(0, region.width)), Int32(max(0, region.height))),
            frameSize: SIMD2(Int32(original.width), Int32(original.height)), inverseFrame: SIMD2(inverse.0, inverse.1),
            faceCount: Int32(gains == nil ? 0 : faceCount), edgeReach: edgeReach, hasUserMatte: userMatte == nil ? 0 : 1)
        recorder.dispatch(weights == nil ? kernel : weightedKernel,
                          [.sampledImage(original, .nearest), .sampledImage(spotFixed, .nearest),
                           .sampledImage(processed, .nearest), .sampledImage(mask, .linear),
                           .storageImage(destination), .storageImage(weights ?? dummy),
                           .buffer(geometry), .buffer(gains ?? geometry), .sampledImage(userMatte ?? dummy, .nearest)],
                          push: push, covering: original.width, original.height)
    }
}
