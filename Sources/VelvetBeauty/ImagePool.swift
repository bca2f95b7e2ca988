import VelvetGPU

/// Intermediate images kept between frames by name, reallocated only when the size or
/// format a stage needs changes (creating an image costs a submission). The images bound
/// to an earlier recorder stay alive until that recorder's work is done, so replacing one
/// here never pulls it from under the GPU.
final class ImagePool {
    private let context: GPUContext
    private var images: [String: GPUImage] = [:]

    init(context: GPUContext) { self.context = context }

    func image(_ name: String, width: Int, height: Int, format: PixelFormat) throws -> GPUImage {
        if let image = images[name], image.width == width, image.height == height, image.format == format {
            return image
        }
        let image = try GPUImage(context: context, width: width, height: height, format: format)
        images[name] = image
        return image
    }

    /// An image at least `width` x `height` (grow-only: sizes that change per frame,
    /// like the bilateral grid, reuse one allocation).
    func atLeast(_ name: String, width: Int, height: Int, format: PixelFormat) throws -> GPUImage {
        let old = images[name].flatMap { $0.format == format ? $0 : nil }
        if let old, old.width >= width, old.height >= height { return old }
        let limit = context.maxImageSide
        let image = try GPUImage(context: context, width: Self.side(holding: width, kept: old?.width ?? 0, limit: limit),
                                 height: Self.side(holding: height, kept: old?.height ?? 0, limit: limit), format: format)
        images[name] = image
        return image
    }

    /// A grown side: a quarter more than `needed` when it outgrows `kept`, so a face that
    /// grows a pixel a frame (walking towards the camera) costs a new image, a submission and
    /// a wait for the queue a few times over the clip, not every frame.
    static func side(holding needed: Int, kept: Int, limit: Int) -> Int {
        needed <= kept ? kept : max(needed, min(limit, needed + needed / 4))
    }
}

/// The one Gaussian blur the stages share. Sigma follows the face size, so it is passed
/// per call (a blur object per sigma grew without bound over a long video).
final class BlurCache {
    private let blur: GaussianBlur

    init(context: GPUContext) throws { blur = try GaussianBlur(context: context) }

    /// Records a blur with sigma clamped to the kernel's range.
    func record(on recorder: CommandRecorder, source: GPUImage, destination: GPUImage, scratch: GPUImage, sigma: Float) throws {
        try blur.record(on: recorder, source: source, destination: destination, scratch: scratch,
                        sigma: min(max(sigma, 0), GaussianBlur.maxSigma))
    }
}

extension GPUImage {
    var inverseSize: (Float, Float) { (1 / Float(width), 1 / Float(height)) }
}
