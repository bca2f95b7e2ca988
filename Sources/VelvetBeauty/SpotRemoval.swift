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
/// their size. The number is capped too: at most `spotMaxCount` per face, the darkest
/// against their surroundings (`beauty_spot_peaks.comp` lists one peak per blob,
/// `beauty_spot_cap.comp` undoes the fills of the rest).
///
/// Over the frames of a video the fill weights are averaged by face, through its motion
/// (`SpotMemory`), so a faint spot does not come and go with the noise.
final class SpotRemoval {
    private let detect: TypedKernel<KernelLibrary.BeautySpotsPush>
    private let findPeaks: TypedKernel<KernelLibrary.BeautySpotPeaksPush>
    private let cap: TypedKernel<KernelLibrary.BeautySpotCapPush>
    private let context: GPUContext
    private var peakList: GPUBuffer?
    private let memory: SpotMemory

    /// Entries in the peak list; a frame with more blobs than this keeps only listed ones.
    static let peakCapacity = 4096
    /// The peak list's header: count, capacity and two words of padding (vec4 alignment).
    private static let headerBytes = 16

    init(context: GPUContext) throws {
        self.context = context
        detect = try TypedKernel(context: context)
        findPeaks = try TypedKernel(context: context)
        cap = try TypedKernel(context: context)
        memory = SpotMemory(context: context)
    }

    /// Starts a frame of `width` x `height`: the faces recorded next are this frame's.
    func beginFrame(width: Int, height: Int) throws {
        try memory.beginFrame(width: width, height: height)
    }

    /// A frame without spot removal: the next one starts afresh.
    func skipFrame() {
        memory.forget()
    }

    /// Records spot removal for `face` over `region` (one face's, or all faces' with
    /// `faceCount` > 1: their spots are capped together).
    func record(on recorder: CommandRecorder, source: GPUImage, mask: GPUImage, destination: GPUImage,
                region: PixelRegion, face: BeautyFace, faceCount: Int, settings: BeautySettings) throws {
        let fineRadius = max(1, settings.spotFineRadius * face.faceSize)
        let coarseRadius = max(2, settings.spotCoarseRadius * face.faceSize)
        let inverse = source.inverseSize
        let recall = memory.recall(face, region: region)
        let push = KernelLibrary.BeautySpotsPush(
            origin: SIMD2(Int32(region.x), Int32(region.y)), size: SIMD2(Int32(region.width), Int32(region.height)),
            inverseFrame: SIMD2(inverse.0, inverse.1), fineRadius: fineRadius, coarseRadius: coarseRadius,
            threshold: settings.spotThreshold, contrastCap: settings.spotContrastCap, spreadRatio: settings.spotRingSpread,
            maxLift: settings.spotMaxLift, strength: settings.spotRemoval, memory: recall.mode.rawValue,
            lastOrigin: SIMD2(Int32(recall.lastRegion.x), Int32(recall.lastRegion.y)),
            lastSize: SIMD2(Int32(recall.lastRegion.width), Int32(recall.lastRegion.height)),
            warpX: recall.warpX, warpY: recall.warpY, newWeight: MeasurementMemory.newWeight)
        let (last, next) = try memory.images()
        recorder.dispatch(detect, [.sampledImage(source, .linear), .sampledImage(mask, .linear), .storageImage(destination),
                                   .sampledImage(last, .linear), .storageImage(next)],
                          push: push, covering: region.width, region.height)
        try recordCap(on: recorder, source: source, destination: destination, region: region,
                      fineRadius: fineRadius, coarseRadius: coarseRadius, maxCount: settings.spotMaxCount * max(1, faceCount))
    }

    private func recordCap(on recorder: CommandRecorder, source: GPUImage, destination: GPUImage, region: PixelRegion,
                           fineRadius: Float, coarseRadius: Float, maxCount: Int) throws {
        let list = try peakListBuffer()
        try recorder.fill(list, offset: 0, size: 4, value: 0)
        try recorder.fill(list, offset: 4, size: 4, value: UInt32(Self.peakCapacity))
        let inverse = source.inverseSize
        let peaksPush = KernelLibrary.BeautySpotPeaksPush(
            origin: SIMD2(Int32(region.x), Int32(region.y)), size: SIMD2(Int32(region.width), Int32(region.height)),
            inverseFrame: SIMD2(inverse.0, inverse.1), windowRadius: max(1.5, fineRadius), minLift: 1.0 / 255,
            fineRadius: fineRadius, coarseRadius: coarseRadius)
        recorder.dispatch(findPeaks, [.sampledImage(source, .linear), .sampledImage(destination, .nearest), .buffer(list)],
                          push: peaksPush, covering: region.width, region.height)
        let capPush = KernelLibrary.BeautySpotCapPush(
            origin: SIMD2(Int32(region.x), Int32(region.y)), size: SIMD2(Int32(region.width), Int32(region.height)),
            linkRadius: 2 * coarseRadius, maxCount: Int32(min(maxCount, Int(Int32.max))))
        recorder.dispatch(cap, [.sampledImage(source, .nearest), .storageImage(destination), .buffer(list)],
                          push: capPush, covering: region.width, region.height)
    }

    private func peakListBuffer() throws -> GPUBuffer {
        if let peakList { return peakList }
        let list = try GPUBuffer(context: context, size: Self.headerBytes + Self.peakCapacity * 16)
        peakList = list
        return list
    }
}
