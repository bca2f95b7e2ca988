import VelvetGPU
import VelvetKernels

/// Stage 1: the skin mask, zone map and spot permission (one rgba16f image at mask
/// resolution; channels r = skin, g = zone intensity, b = spot permission).
///
/// - Person mask: resampled onto a frame-shaped grid `personFactor` times coarser than the
///   frame and blurred there with sigma = personBlurSigma1080 x min(width, height) / 1080
///   frame pixels (the seed post's sigma 12 at 1080p, scaled with the frame), which is
///   cheap because that blur is so wide the coarse grid loses nothing.
/// - Mask resolution: the frame divided by max(1, floor(largest face size / 96)), so the
///   largest face spans 96...192 mask pixels: the mask is smooth and feathered, later
///   stages sample it bilinearly, and the polygon work per face stays constant.
/// - Polygons and gradient are evaluated per mask pixel in the kernel (signed distance to
///   each grown polygon), so no frame is rasterised on the CPU.
final class SkinMask {
    private let resample: ComputeKernel
    private let draw: ComputeKernel
    private let blurs: BlurCache
    private let pool: ImagePool
    private let context: GPUContext
    private var fullPerson: GPUImage?

    init(context: GPUContext, pool: ImagePool, blurs: BlurCache) throws {
        self.context = context
        self.pool = pool
        self.blurs = blurs
        resample = try ComputeKernel(context: context, source: KernelLibrary.beautyPersonResample)
        draw = try ComputeKernel(context: context, source: KernelLibrary.beautySkinMask)
    }

    /// Mask pixels per face size: enough for feathered holes, and it keeps the polygon
    /// work per face constant whatever the frame size.
    static let pixelsPerFace: Float = 96

    static func maskFactor(largestFaceSize: Float) -> Int { max(1, Int(largestFaceSize / pixelsPerFace)) }

    static func personBlurSigma(width: Int, height: Int, settings: BeautySettings) -> Float {
        settings.mask.personBlurSigma1080 * Float(min(width, height)) / 1080
    }

    /// Records the stage; returns the mask image (valid until the next frame is recorded).
    func record(on recorder: CommandRecorder, frameWidth: Int, frameHeight: Int, geometry: SkinMaskGeometry,
                personMask: GPUImage?, settings: BeautySettings) throws -> GPUImage {
        // Person probability, blurred on a coarse frame-shaped grid.
        let sigma = Self.personBlurSigma(width: frameWidth, height: frameHeight, settings: settings)
        let personFactor = max(1, Int(sigma / 2))
        let pw = (frameWidth + personFactor - 1) / personFactor
        let ph = (frameHeight + personFactor - 1) / personFactor
        let person = try personMask ?? allPerson()
        let resampled = try pool.image("person.resampled", width: pw, height: ph, format: .r16f)
        let blurred = try pool.image("person.blurred", width: pw, height: ph, format: .r16f)
        let scratch = try pool.image("person.scratch", width: pw, height: ph, format: .rgba16f)
        var push = PushConstants()
        push.ivec2(Int32(pw), Int32(ph))
        recorder.dispatch(resample, [.sampledImage(person, .linear), .storageImage(resampled)], push: push, covering: pw, ph)
        try blurs.record(on: recorder, source: resampled, destination: blurred, scratch: scratch,
                         sigma: sigma * Float(pw) / Float(frameWidth))

        // Mask, zones and spot permission from the polygons.
        let factor = Self.maskFactor(largestFaceSize: geometry.largestFaceSize)
        let mw = (frameWidth + factor - 1) / factor
        let mh = (frameHeight + factor - 1) / factor
        let mask = try pool.image("skin.mask", width: mw, height: mh, format: .rgba16f)
        let floats = geometry.floats.isEmpty ? [Float(0)] : geometry.floats
        let buffer = try GPUBuffer(context: context, size: floats.count * 4)
        try floats.withUnsafeBytes { try recorder.upload($0, to: buffer) }
        var maskPush = PushConstants()
        maskPush.ivec2(Int32(mw), Int32(mh))
        maskPush.vec2(Float(frameWidth) / Float(mw), Float(frameHeight) / Float(mh))
        maskPush.vec2(Float(frameWidth), Float(frameHeight))
        maskPush.int(Int32(geometry.floats.count))
        maskPush.int(Int32(geometry.faceCount))
        maskPush.float(settings.zones.elsewhere)
        maskPush.vec2(settings.mask.personLow, settings.mask.personHigh)
        let reach = geometry.reach
        maskPush.vec4(Float(reach.x / factor), Float(reach.y / factor),
                      Float((reach.x + reach.width + factor - 1) / factor), Float((reach.y + reach.height + factor - 1) / factor))
        recorder.dispatch(draw, [.sampledImage(blurred, .linear), .buffer(buffer), .storageImage(mask)],
                          push: maskPush, covering: mw, mh)
        return mask
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
