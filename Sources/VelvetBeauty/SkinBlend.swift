import VelvetGPU
import VelvetKernels

/// Stage 4: the composite out = mix(spot-fixed, smoothed, skin x zone x gain) over the
/// region of interest, gain the strength fit's for the face (blended across faces); every other pixel, and every pixel with weight 0 and no spot fill,
/// is the original texel unchanged (bit-exact). Optionally also writes the final weight.
/// On a GPU one dispatch over the whole frame also copies the pixels outside the region; on a
/// CPU device the frame is copied first (a memcpy there) and the kernel runs over the region
/// only, since there every invocation costs the whole kernel (the same bytes either way,
/// `SkinBlendTests`).
final class SkinBlend {
    private let context: GPUContext
    /// The kernel copies the pixels outside the region itself (GPUs).
    let copiesOutside: Bool
    /// How the kernel reads its face table (`FaceTable`; nil: the device's way).
    private let faceTableTexels: Bool?
    /// Per (final weights written, a user's matte); the plain one made at once, others at first use.
    private var kernels: [Variant: TypedKernel<KernelLibrary.BeautyBlendPush>] = [:]

    private struct Variant: Hashable {
        let writesWeights: Bool
        let hasUserMatte: Bool
    }

    /// `copiesOutside` nil: the device's way (copied by the transfer on a CPU device).
    init(context: GPUContext, copiesOutside: Bool? = nil, faceTableTexels: Bool? = nil) throws {
        self.context = context
        self.copiesOutside = copiesOutside ?? (context.device.kind != .cpu)
        self.faceTableTexels = faceTableTexels
        _ = try kernel(Variant(writesWeights: false, hasUserMatte: false))
    }

    private func kernel(_ variant: Variant) throws -> TypedKernel<KernelLibrary.BeautyBlendPush> {
        if let kernel = kernels[variant] { return kernel }
        let kernel = try TypedKernel<KernelLibrary.BeautyBlendPush>(
            context: context, specialization: ["WRITE_WEIGHTS": .int(variant.writesWeights ? 1 : 0),
                                               "HAS_USER_MATTE": .int(variant.hasUserMatte ? 1 : 0),
                                               "COPY_OUTSIDE": .int(copiesOutside ? 1 : 0)]
                .merging(FaceTable.specialization(context, texels: faceTableTexels)) { $1 })
        kernels[variant] = kernel
        return kernel
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
                userMatte: GPUImage?) throws {
        let area: PixelRegion
        if copiesOutside {
            area = region.clamped(width: original.width, height: original.height) ?? PixelRegion(x: 0, y: 0, width: 0, height: 0)
        } else {
            try recorder.copy(original, to: destination)
            if let weights { try recorder.clear(weights) }
            guard let clamped = region.clamped(width: original.width, height: original.height) else { return }
            area = clamped
        }
        let covered = copiesOutside ? PixelRegion(x: 0, y: 0, width: original.width, height: original.height) : area
        let inverse = original.inverseSize
        let push = KernelLibrary.BeautyBlendPush(
            origin: SIMD2(Int32(area.x), Int32(area.y)), size: SIMD2(Int32(area.width), Int32(area.height)),
            frameSize: SIMD2(Int32(original.width), Int32(original.height)), inverseFrame: SIMD2(inverse.0, inverse.1),
            faceCount: Int32(gains == nil ? 0 : faceCount), edgeReach: edgeReach)
        recorder.dispatch(try kernel(Variant(writesWeights: weights != nil, hasUserMatte: userMatte != nil)),
                          [.sampledImage(original, .nearest), .sampledImage(spotFixed, .nearest),
                           .sampledImage(processed, .nearest), .sampledImage(mask, .linear),
                           .storageImage(destination), .storageImage(weights ?? dummy),
                           .texels(geometry), .texels(gains ?? geometry), .sampledImage(userMatte ?? dummy, .nearest),
                           .buffer(geometry)],
                          push: push, covering: covered.width, covered.height)
    }
}
