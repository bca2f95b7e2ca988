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
        if let image = images[name], image.width >= width, image.height >= height, image.format == format {
            return image
        }
        let old = images[name]
        let image = try GPUImage(context: context, width: max(width, old?.width ?? 0), height: max(height, old?.height ?? 0),
                                 format: format)
        images[name] = image
        return image
    }
}

/// Gaussian blurs by sigma, so a per-frame sigma does not build a pipeline per frame.
final class BlurCache {
    private let context: GPUContext
    private var blurs: [Int: GaussianBlur] = [:]

    init(context: GPUContext) { self.context = context }

    /// A blur with sigma rounded to 1/100 px.
    func blur(sigma: Float) throws -> GaussianBlur {
        let key = Int((min(sigma, GaussianBlur.maxSigma) * 100).rounded())
        if let blur = blurs[key] { return blur }
        let blur = try GaussianBlur(context: context, sigma: Float(key) / 100)
        blurs[key] = blur
        return blur
    }
}

extension GPUImage {
    var inverseSize: (Float, Float) { (1 / Float(width), 1 / Float(height)) }
}
