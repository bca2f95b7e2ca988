import Foundation
import VelvetGPU
import VelvetKernels

/// Stage 1: the skin mask, zone map and spot permission (one rgba16f image at mask
/// resolution; channels r = skin, g = zone intensity, b = spot permission), and the
/// owner image (which face each mask pixel belongs to), drawn one pass per face.
///
/// - Person mask: each face's pass reads the person probability blurred with a sigma in
///   proportion to that face's size, personBlurSigma x face size / referenceFaceSize (the
///   seed post's sigma 12 for its 430-px face in a 1080p frame), so a 40-px face gets the
///   mask shape a 400-px one gets. Sigmas are rounded to steps of sqrt(2), so faces of
///   about one size share a blur; each blur runs on a frame-shaped grid sigma / 2 times
///   coarser than the frame, which is lossless for so wide a blur.
/// - Mask resolution: the frame divided by max(1, floor(face size / 96)), the face size
///   being the smallest face's but at least a quarter of the largest's: every face spans
///   enough mask pixels for feathered holes, and later stages sample the mask bilinearly.
/// - Polygons and gradient are evaluated per mask pixel in the kernel (signed distance to
///   each grown polygon), so no frame is rasterised on the CPU.
final class SkinMask {
    private let resample: TypedKernel<KernelLibrary.BeautyPersonResamplePush>
    private let draw: TypedKernel<KernelLibrary.BeautySkinMaskPush>
    private let blurs: BlurCache
    private let pool: ImagePool
    private let context: GPUContext
    private var fullPerson: GPUImage?

    init(context: GPUContext, pool: ImagePool, blurs: BlurCache, faceTableTexels: Bool? = nil) throws {
        self.context = context
        self.pool = pool
        self.blurs = blurs
        resample = try TypedKernel(context: context)
        draw = try TypedKernel(context: context, specialization: FaceTable.specialization(context, texels: faceTableTexels))
    }

    /// Mask pixels per face size: enough for feathered holes, and it keeps the polygon
    /// work per face constant whatever the frame size.
    static let pixelsPerFace: Float = 96
    /// The face size (px) the seed post's person-blur sigma belongs to.
    static let referenceFaceSize: Float = 430

    static func maskFactor(geometry: SkinMaskGeometry) -> Int {
        max(1, Int(max(geometry.smallestFaceSize, geometry.largestFaceSize / 4) / pixelsPerFace))
    }

    /// The person-blur sigma (frame pixels) for a face of `faceSize`, rounded to a step of sqrt(2).
    static func personBlurSigma(faceSize: Float, settings: BeautySettings) -> Float {
        let sigma = settings.mask.personBlurSigma * faceSize / referenceFaceSize
        guard sigma > 0 else { return 0 }
        return powf(2, (2 * log2f(sigma)).rounded() / 2)
    }

    /// The mask and owner images of one frame (valid until the next frame is recorded).
    struct Output {
        let mask: GPUImage
        let owner: GPUImage
        /// The faces' geometry as the kernel read it (the blend reads it too).
        let geometry: GPUBuffer
        /// Frame pixels per mask pixel.
        let factor: Int
    }

    /// Records the stage for every face of `geometry`.
    func record(on recorder: CommandRecorder, frameWidth: Int, frameHeight: Int, geometry: SkinMaskGeometry,
                personMask: GPUImage?, settings: BeautySettings, keptAs suffix: String = "") throws -> Output {
        let factor = Self.maskFactor(geometry: geometry)
        let mw = (frameWidth + factor - 1) / factor
        let mh = (frameHeight + factor - 1) / factor
        let mask = try pool.image("skin.mask" + suffix, width: mw, height: mh, format: .rgba16f)
        let owner = try pool.image("skin.owner" + suffix, width: mw, height: mh, format: .r16f)
        let floats = geometry.floats.isEmpty ? [Float(0)] : geometry.floats
        let buffer = try GPUBuffer.pooled(context: context, size: floats.count * 4)
        try floats.withUnsafeBytes { try recorder.upload($0, to: buffer) }

        var blurred: [Float: GPUImage] = [:]
        for (index, face) in geometry.faces.enumerated() {
            let sigma = Self.personBlurSigma(faceSize: face.face.faceSize, settings: settings)
            let person: GPUImage
            if let done = blurred[sigma] {
                person = done
            } else {
                person = try blurredPerson(on: recorder, personMask: personMask, sigma: sigma, slot: blurred.count,
                                           frameWidth: frameWidth, frameHeight: frameHeight)
                blurred[sigma] = person
            }
            // The first pass covers the whole mask (and starts it empty), the rest their face's reach.
            let first = index == 0
            let x0 = first ? 0 : face.region.x / factor, y0 = first ? 0 : face.region.y / factor
            let x1 = first ? mw : min(mw, (face.region.x + face.region.width + factor - 1) / factor)
            let y1 = first ? mh : min(mh, (face.region.y + face.region.height + factor - 1) / factor)
            guard x1 > x0, y1 > y0 else { continue }
            let push = KernelLibrary.BeautySkinMaskPush(
                size: SIMD2(Int32(mw), Int32(mh)), pixelScale: SIMD2(Float(frameWidth) / Float(mw), Float(frameHeight) / Float(mh)),
                frameSize: SIMD2(Float(frameWidth), Float(frameHeight)), faceCount: Int32(geometry.faceCount),
                face: Int32(index), firstPass: first ? 1 : 0, elsewhere: settings.zones.elsewhere,
                personRamp: SIMD2(settings.mask.personLow, settings.mask.personHigh),
                origin: SIMD2(Int32(x0), Int32(y0)), extent: SIMD2(Int32(x1 - x0), Int32(y1 - y0)))
            recorder.dispatch(draw, [.sampledImage(person, .linear), .texels(buffer), .storageImage(mask), .storageImage(owner),
                                      .buffer(buffer)],
                              push: push, covering: x1 - x0, y1 - y0)
        }
        return Output(mask: mask, owner: owner, geometry: buffer, factor: factor)
    }

    /// The person probability blurred with `sigma` on a frame-shaped grid sigma / 2 times
    /// coarser than the frame, in the pooled images of `slot` (the frame's n-th sigma).
    private func blurredPerson(on recorder: CommandRecorder, personMask: GPUImage?, sigma: Float, slot: Int,
                               frameWidth: Int, frameHeight: Int) throws -> GPUImage {
        let gridFactor = max(1, Int(sigma / 2))
        let pw = (frameWidth + gridFactor - 1) / gridFactor
        let ph = (frameHeight + gridFactor - 1) / gridFactor
        let person = try personMask ?? allPerson()
        let key = "person.\(slot)"
        let resampled = try pool.image("\(key).resampled", width: pw, height: ph, format: .r16f)
        let blurred = try pool.image("\(key).blurred", width: pw, height: ph, format: .r16f)
        let scratch = try pool.image("\(key).scratch", width: pw, height: ph, format: .rgba16f)
        let push = KernelLibrary.BeautyPersonResamplePush(size: SIMD2(Int32(pw), Int32(ph)))
        recorder.dispatch(resample, [.sampledImage(person, .linear), .storageImage(resampled)], push: push, covering: pw, ph)
        try blurs.record(on: recorder, source: resampled, destination: blurred, scratch: scratch,
                         sigma: sigma * Float(pw) / Float(frameWidth))
        return blurred
    }

    /// A 1x1 probability of 1: no segmentation given means "person everywhere".
    private func allPerson() throws -> GPUImage {
        if let fullPerson { return fullPerson }
        let image = try GPUImage(context: context, width: 1, height: 1, format: .r32f)
        let recorder = try CommandRecorder(context: context)
        try [Float(1)].withUnsafeBytes { try recorder.upload($0, to: image) }
        try recorder.submit().wait()
        fullPerson = image
        return image
    }
}
