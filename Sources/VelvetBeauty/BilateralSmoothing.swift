import Foundation
import VelvetGPU
import VelvetKernels

/// Bilateral smoothing of the skin: spatial sigma = radius / 3 with
/// radius = maxRadius x face size (strength acts through the blend gain), range sigma on luma; RGB is averaged with
/// those weights, each neighbour also weighted by its skin-mask value (a mask-aware
/// bilateral: eyes, brows, lips and background do not bleed into the skin), and the
/// colour (non-luma) part of the change is scaled by
/// `chromaSmoothing`; nothing is sharpened.
///
/// `.grid` (default) is a bilateral grid whose cost does not grow with the radius: splat
/// (two gather passes, tent weights), a separable Gaussian blur in grid space, and a
/// trilinear slice. Cells are `spatialSampling` x sigma and `rangeSampling` x range sigma
/// apart; the grid blur makes up the rest of each sigma (a tent splat and a tent slice add
/// a variance of cell^2 / 3), so the effective kernel is close to the exact Gaussian one.
/// `.exact` is the brute-force reference (`beauty_bilateral_exact.comp`).
final class BilateralSmoothing {
    static let spatialSampling: Float = 1
    static let rangeSampling: Float = 1
    static let maxBins = 48

    private let exact: ComputeKernel
    private let splatX: ComputeKernel
    private let splatY: ComputeKernel
    private let blur: ComputeKernel
    private let slice: ComputeKernel
    private let pool: ImagePool

    init(context: GPUContext, pool: ImagePool) throws {
        self.pool = pool
        exact = try ComputeKernel(context: context, source: KernelLibrary.beautyBilateralExact)
        splatX = try ComputeKernel(context: context, source: KernelLibrary.beautyGridSplatX)
        splatY = try ComputeKernel(context: context, source: KernelLibrary.beautyGridSplatY)
        blur = try ComputeKernel(context: context, source: KernelLibrary.beautyGridBlur)
        slice = try ComputeKernel(context: context, source: KernelLibrary.beautyGridSlice)
    }

    /// Spatial sigma in pixels for these settings and face size.
    static func spatialSigma(settings: BeautySettings, faceSize: Float) -> Float {
        settings.maxRadius * faceSize / 3
    }

    /// Records the filter of `source` into `destination` over `region` (pixels where the
    /// mask is 0 are copied). Returns false when the radius is below half a pixel, where
    /// the filter would be a copy and nothing was recorded.
    func record(on recorder: CommandRecorder, source: GPUImage, mask: GPUImage, destination: GPUImage,
                region: PixelRegion, faceSize: Float, settings: BeautySettings) throws -> Bool {
        let sigma = Self.spatialSigma(settings: settings, faceSize: faceSize)
        guard sigma >= 0.5 / 3, !region.isEmpty else { return false }
        switch settings.bilateral {
        case .exact:
            var push = PushConstants()
            push.ivec2(Int32(region.x), Int32(region.y))
            push.ivec2(Int32(region.width), Int32(region.height))
            let inverse = source.inverseSize
            push.vec2(inverse.0, inverse.1)
            push.int(Int32((3 * sigma).rounded(.up)))
            push.float(-1 / (2 * sigma * sigma))
            push.float(-1 / (2 * settings.rangeSigma * settings.rangeSigma))
            push.float(settings.chromaSmoothing)
            recorder.dispatch(exact, [.sampledImage(source, .nearest), .sampledImage(mask, .linear), .storageImage(destination)],
                              push: push, covering: region.width, region.height)
        case .grid:
            try recordGrid(on: recorder, source: source, mask: mask, destination: destination, region: region,
                           sigma: sigma, rangeSigma: settings.rangeSigma, chroma: settings.chromaSmoothing)
        }
        return true
    }

    private func recordGrid(on recorder: CommandRecorder, source: GPUImage, mask: GPUImage, destination: GPUImage,
                            region: PixelRegion, sigma: Float, rangeSigma: Float, chroma: Float) throws {
        let cell = max(1, Self.spatialSampling * sigma)
        var rangeCell = Self.rangeSampling * rangeSigma
        if Int(1 / rangeCell) + 2 > Self.maxBins { rangeCell = 1 / Float(Self.maxBins - 2) }
        let bins = Int(1 / rangeCell) + 2
        let gridWidth = Int(Float(region.width - 1) / cell) + 2
        let gridHeight = Int(Float(region.height - 1) / cell) + 2
        let rows = try pool.atLeast("grid.rows", width: gridWidth * bins, height: region.height, format: .rgba16f)
        let gridA = try pool.atLeast("grid.a", width: gridWidth * bins, height: gridHeight, format: .rgba16f)
        let gridB = try pool.atLeast("grid.b", width: gridWidth * bins, height: gridHeight, format: .rgba16f)

        func push(axis: Int = 0, sigmaCells: Float = 0) -> PushConstants {
            var push = PushConstants()
            push.ivec2(Int32(region.x), Int32(region.y))
            push.ivec2(Int32(region.width), Int32(region.height))
            push.ivec2(Int32(gridWidth), Int32(gridHeight))
            push.float(cell)
            push.float(rangeCell)
            push.int(Int32(bins))
            push.int(Int32(axis))
            push.int(Int32(sigmaCells > 0 ? (3 * sigmaCells).rounded(.up) : 0))
            push.float(sigmaCells > 0 ? -1 / (2 * sigmaCells * sigmaCells) : 0)
            let inverse = source.inverseSize
            push.vec2(inverse.0, inverse.1)
            push.float(chroma)
            return push
        }
        recorder.dispatch(splatX, [.sampledImage(source, .nearest), .sampledImage(mask, .linear), .storageImage(rows)], push: push(),
                          covering: gridWidth, region.height)
        recorder.dispatch(splatY, [.sampledImage(rows, .nearest), .storageImage(gridA)], push: push(),
                          covering: gridWidth * bins, gridHeight)
        // The tents of splat and slice already give each axis a variance of cell^2 / 3.
        let spatialBlur = (max(0, (sigma / cell) * (sigma / cell) - 1.0 / 3)).squareRoot()
        let rangeBlur = (max(0, (rangeSigma / rangeCell) * (rangeSigma / rangeCell) - 1.0 / 3)).squareRoot()
        var current = gridA, other = gridB
        for (axis, sigmaCells) in [(0, spatialBlur), (1, spatialBlur), (2, rangeBlur)] where sigmaCells > 0.05 {
            recorder.dispatch(blur, [.sampledImage(current, .nearest), .storageImage(other)],
                              push: push(axis: axis, sigmaCells: sigmaCells), covering: gridWidth * bins, gridHeight)
            swap(&current, &other)
        }
        recorder.dispatch(slice, [.sampledImage(source, .nearest), .sampledImage(current, .linear),
                                  .sampledImage(mask, .linear), .storageImage(destination)],
                          push: push(), covering: region.width, region.height)
    }
}
