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
///
/// The full test, the peak list and the cap run only where they can matter: a first pass
/// writes the region unchanged, a second over the ovals' part of it lists the pixels that may
/// be spots, the full test runs over that list and lists what it fills, and the peak and cap
/// passes run over the fills (indirect dispatches over lists built on the GPU,
/// `beauty_pixel_list.glsl`); the cap only when more peaks were found than it keeps.
final class SpotRemoval {
    private let settle: TypedKernel<KernelLibrary.BeautySpotsPush>
    private let classify: TypedKernel<KernelLibrary.BeautySpotsPush>
    private let luma: TypedKernel<KernelLibrary.BeautySpotsPush>
    private let detect: TypedKernel<KernelLibrary.BeautySpotsPush>
    private let findPeaks: TypedKernel<KernelLibrary.BeautySpotPeaksPush>
    /// The cap's passes (`beauty_spot_cap.comp`): size the next two, rank the peaks, cap the fills.
    private let capPasses: (groups: TypedKernel<KernelLibrary.BeautySpotCapPush>, rank: TypedKernel<KernelLibrary.BeautySpotCapPush>,
                            cap: TypedKernel<KernelLibrary.BeautySpotCapPush>)
    private let context: GPUContext
    private let pool: ImagePool
    private var peakList: GPUBuffer?
    /// The cap's state: its passes' indirect dispatches and a kept flag per listed peak.
    private var capStateBuffer: GPUBuffer?
    /// The candidate and fill lists (`beauty_pixel_list.glsl`), room for a frame's pixels each.
    private var pixelListBuffers: (candidates: GPUBuffer, fills: GPUBuffer)?
    private let memory: SpotMemory

    /// Entries in the peak list; a frame with more blobs than this keeps only listed ones.
    static let peakCapacity = 4096
    /// The peak list's header: count, capacity and two words of padding (vec4 alignment).
    private static let headerBytes = 16
    /// A pixel list's head: the indirect dispatch's three workgroup counts and the count.
    private static let pixelListHeaderBytes = 16

    /// `classifiesAll`: every permitted pixel is a candidate (tests check the candidate
    /// test against it: the outputs must be the same bytes).
    init(context: GPUContext, pool: ImagePool, classifiesAll: Bool = false) throws {
        self.context = context
        self.pool = pool
        luma = try TypedKernel(context: context, specialization: ["PASS": .int(3)])
        settle = try TypedKernel(context: context, specialization: ["PASS": .int(0)])
        classify = try TypedKernel(context: context, specialization: [
            "PASS": .int(1), "CLASSIFY_ALL": .int(classifiesAll ? 1 : 0),
            "CANDIDATE_MARGIN": .float(Self.candidateMargin(subTexelPrecisionBits: context.subTexelPrecisionBits))])
        detect = try TypedKernel(context: context, specialization: ["PASS": .int(2)])
        findPeaks = try TypedKernel(context: context)
        capPasses = (try TypedKernel(context: context, specialization: ["PASS": .int(0)]),
                     try TypedKernel(context: context, specialization: ["PASS": .int(1)]),
                     try TypedKernel(context: context, specialization: ["PASS": .int(2)]))
        memory = SpotMemory(context: context)
    }

    /// Starts a frame of `width` x `height`: the faces recorded next are this frame's.
    func beginFrame(width: Int, height: Int) throws {
        try memory.beginFrame(width: width, height: height)
        // Room for every pixel of the frame, so that no frame of a render makes a new buffer.
        let size = Self.pixelListHeaderBytes + width * height * 4
        if pixelListBuffers?.candidates.size != size {
            pixelListBuffers = (try GPUBuffer(context: context, size: size), try GPUBuffer(context: context, size: size))
        }
    }

    /// A frame without spot removal: the next one starts afresh.
    func skipFrame() {
        memory.forget()
    }

    /// Records spot removal for `face` over `region` (one face's, or all faces' with
    /// `faceCount` > 1: their spots are capped together). `ovals`: the frame pixels inside some
    /// face's oval, outside which the mask permits no spot removal.
    func record(on recorder: CommandRecorder, source: GPUImage, mask: GPUImage, destination: GPUImage,
                region: PixelRegion, ovals: PixelRegion, face: BeautyFace, faceCount: Int, settings: BeautySettings) throws {
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
            warpX: recall.warpX, warpY: recall.warpY, newWeight: MeasurementMemory.newWeight, lumaOrigin: .zero)
        let (last, next) = try memory.images()
        // The permission is read bilinearly from the mask: it reaches a mask pixel past the ovals.
        let maskPixel = Int((Float(max(source.width, source.height)) / Float(max(1, min(mask.width, mask.height)))).rounded(.up))
        let classified = region.intersection(ovals.grown(by: maskPixel + 2, width: source.width, height: source.height))
        // The candidate test reads luma up to the coarse ring (2 radii) and one texel past it.
        let lumaArea = classified.grown(by: Int((2 * coarseRadius).rounded(.up)) + 2, width: source.width, height: source.height)
        let lumaImage = try pool.atLeast("spots.luma", width: max(1, lumaArea.width), height: max(1, lumaArea.height), format: .r32f)
        guard let (candidates, fills) = pixelListBuffers else { throw BeautyError.invalidSettings("spot removal used before a frame began") }
        for list in [candidates, fills] {
            try recorder.fill(list, offset: 0, size: Self.pixelListHeaderBytes, value: 0)
            try recorder.fill(list, offset: 4, size: 8, value: 1)
        }
        let bindings: [GPUBinding] = [.sampledImage(source, .linear), .sampledImage(mask, .linear), .storageImage(destination),
                                      .sampledImage(last, .linear), .storageImage(next), .buffer(candidates), .buffer(fills),
                                      .storageImage(lumaImage)]
        recorder.dispatch(settle, bindings, push: push, covering: region.width, region.height)
        if !classified.isEmpty {
            var lumaPush = push
            lumaPush.origin = SIMD2(Int32(lumaArea.x), Int32(lumaArea.y))
            lumaPush.size = SIMD2(Int32(lumaArea.width), Int32(lumaArea.height))
            lumaPush.lumaOrigin = lumaPush.origin
            recorder.dispatch(luma, bindings, push: lumaPush, covering: lumaArea.width, lumaArea.height)
            var classifiedPush = push
            classifiedPush.origin = SIMD2(Int32(classified.x), Int32(classified.y))
            classifiedPush.size = SIMD2(Int32(classified.width), Int32(classified.height))
            classifiedPush.lumaOrigin = lumaPush.origin
            recorder.dispatch(classify, bindings, push: classifiedPush, covering: classified.width, classified.height)
        }
        recorder.dispatch(detect, bindings, push: push, groupsIn: candidates)
        try recordCap(on: recorder, source: source, destination: destination, fills: fills, region: region,
                      fineRadius: fineRadius, coarseRadius: coarseRadius, maxCount: settings.spotMaxCount * max(1, faceCount))
    }

    /// The luma margin of the candidate test (`beauty_spots.comp`): with its weights cut to
    /// `bits` fractional bits a filtered sample may be off exact interpolation by 2^-bits of a
    /// step (luma steps are at most 1), and a bound compares a ring sample with the disc (a
    /// mean of four samples and the pixel), so it may be off by twice that; at least 1/128.
    static func candidateMargin(subTexelPrecisionBits bits: Int) -> Float {
        max(1.0 / 128, 2 / Float(1 << max(0, min(bits, 16))))
    }

    /// The candidates the last recorded face listed (read once its submission completed).
    func candidateCount() throws -> Int {
        guard let candidates = pixelListBuffers?.candidates else { return 0 }
        let recorder = try CommandRecorder(context: context)
        let readback = try recorder.download(candidates)
        try recorder.submit().wait()
        return Int(readback.raw.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
    }

    private func recordCap(on recorder: CommandRecorder, source: GPUImage, destination: GPUImage, fills: GPUBuffer,
                           region: PixelRegion, fineRadius: Float, coarseRadius: Float, maxCount: Int) throws {
        let list = try peakListBuffer()
        try recorder.fill(list, offset: 0, size: 4, value: 0)
        try recorder.fill(list, offset: 4, size: 4, value: UInt32(Self.peakCapacity))
        let inverse = source.inverseSize
        let peaksPush = KernelLibrary.BeautySpotPeaksPush(
            origin: SIMD2(Int32(region.x), Int32(region.y)), size: SIMD2(Int32(region.width), Int32(region.height)),
            inverseFrame: SIMD2(inverse.0, inverse.1), windowRadius: max(1.5, fineRadius), minLift: 1.0 / 255,
            fineRadius: fineRadius, coarseRadius: coarseRadius)
        recorder.dispatch(findPeaks, [.sampledImage(source, .linear), .sampledImage(destination, .nearest), .buffer(list),
                                      .buffer(fills)],
                          push: peaksPush, groupsIn: fills)
        let capPush = KernelLibrary.BeautySpotCapPush(linkRadius: 2 * coarseRadius, maxCount: Int32(min(maxCount, Int(Int32.max))))
        let state = try capState()
        let capBindings: [GPUBinding] = [.sampledImage(source, .nearest), .storageImage(destination), .buffer(list), .buffer(fills),
                                         .texels(list, offset: Self.headerBytes, size: Self.peakCapacity * 16), .buffer(state)]
        // The rank and cap passes run only when the cap binds (more peaks than it keeps).
        recorder.dispatch(capPasses.groups, capBindings, push: capPush, covering: 1, 1)
        recorder.dispatch(capPasses.rank, capBindings, push: capPush, groupsIn: state, offset: 0)
        recorder.dispatch(capPasses.cap, capBindings, push: capPush, groupsIn: state, offset: 16)
    }

    private func capState() throws -> GPUBuffer {
        if let capStateBuffer { return capStateBuffer }
        let buffer = try GPUBuffer(context: context, size: 32 + Self.peakCapacity * 4)
        capStateBuffer = buffer
        return buffer
    }

    private func peakListBuffer() throws -> GPUBuffer {
        if let peakList { return peakList }
        let list = try GPUBuffer(context: context, size: Self.headerBytes + Self.peakCapacity * 16)
        try list.prepareTexels(offset: Self.headerBytes, size: Self.peakCapacity * 16)
        peakList = list
        return list
    }
}
