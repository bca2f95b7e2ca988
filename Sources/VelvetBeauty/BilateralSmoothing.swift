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

    private let exact: TypedKernel<KernelLibrary.BeautyBilateralExactPush>
    private let context: GPUContext
    /// The x splat per range-bin count on CPU devices (`BINS` in beauty_grid_splat_x.comp);
    /// GPUs use the one kernel of any count, under key 0.
    private var splatX: [Int: TypedKernel<KernelLibrary.BeautyGridSplatXPush>] = [:]
    private let fixesBins: Bool
    private let splatY: TypedKernel<KernelLibrary.BeautyGridSplatYPush>
    private let blur: TypedKernel<KernelLibrary.BeautyGridBlurPush>
    private let slice: TypedKernel<KernelLibrary.BeautyGridSlicePush>
    private let pool: ImagePool

    /// `fixesBins`: one x-splat pipeline per range-bin count (the device's way unless given:
    /// CPU devices).
    init(context: GPUContext, pool: ImagePool, fixesBins: Bool? = nil) throws {
        self.pool = pool
        self.context = context
        exact = try TypedKernel(context: context)
        self.fixesBins = fixesBins ?? (context.device.kind == .cpu)
        if !self.fixesBins { splatX[0] = try TypedKernel(context: context) }
        splatY = try TypedKernel(context: context)
        blur = try TypedKernel(context: context)
        slice = try TypedKernel(context: context)
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
            let inverse = source.inverseSize
            let push = KernelLibrary.BeautyBilateralExactPush(
                origin: SIMD2(Int32(region.x), Int32(region.y)), size: SIMD2(Int32(region.width), Int32(region.height)),
                inverseFrame: SIMD2(inverse.0, inverse.1), radius: Int32((3 * sigma).rounded(.up)),
                spatialFactor: -1 / (2 * sigma * sigma), rangeFactor: -1 / (2 * settings.rangeSigma * settings.rangeSigma),
                chroma: settings.chromaSmoothing)
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

        func push<Push: BilateralGridPush>(axis: Int = 0, sigmaCells: Float = 0) -> Push {
            let inverse = source.inverseSize
            return Push(origin: SIMD2(Int32(region.x), Int32(region.y)), size: SIMD2(Int32(region.width), Int32(region.height)),
                        gridSize: SIMD2(Int32(gridWidth), Int32(gridHeight)), cell: cell, rangeCell: rangeCell, bins: Int32(bins),
                        axis: Int32(axis), radius: Int32(sigmaCells > 0 ? (3 * sigmaCells).rounded(.up) : 0),
                        blurFactor: sigmaCells > 0 ? -1 / (2 * sigmaCells * sigmaCells) : 0,
                        inverseFrame: SIMD2(inverse.0, inverse.1), chroma: chroma)
        }
        recorder.dispatch(try splatKernel(bins: bins), [.sampledImage(source, .nearest), .sampledImage(mask, .linear), .storageImage(rows)], push: push(),
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

    private func splatKernel(bins: Int) throws -> TypedKernel<KernelLibrary.BeautyGridSplatXPush> {
        let key = fixesBins ? bins : 0
        if let kernel = splatX[key] { return kernel }
        let kernel = try TypedKernel<KernelLibrary.BeautyGridSplatXPush>(context: context, specialization: ["BINS": .int(Int32(key))])
        splatX[key] = kernel
        return kernel
    }
}

/// The push block the four grid kernels share (`beauty_grid_common.glsl`): each generated
/// struct conforms through its memberwise init, so a kernel whose block drifts from the others
/// stops compiling here.
protocol BilateralGridPush: KernelPushBlock {
    init(origin: SIMD2<Int32>, size: SIMD2<Int32>, gridSize: SIMD2<Int32>, cell: Float, rangeCell: Float, bins: Int32,
         axis: Int32, radius: Int32, blurFactor: Float, inverseFrame: SIMD2<Float>, chroma: Float)
}

extension KernelLibrary.BeautyGridSplatXPush: BilateralGridPush {}
extension KernelLibrary.BeautyGridSplatYPush: BilateralGridPush {}
extension KernelLibrary.BeautyGridBlurPush: BilateralGridPush {}
extension KernelLibrary.BeautyGridSlicePush: BilateralGridPush {}
