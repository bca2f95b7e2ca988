import VelvetGPU
import VelvetKernels

/// Writes a model's [1, H, W, 3] input tensor from an image on the GPU: each tensor
/// pixel samples the image bilinearly through an affine transform, and the RGB values
/// (in 0...1 for unorm images) are mapped by `value * scale + offset` per channel.
/// Cropping, letterboxing, rotation and stretching are all choices of the transform.
public final class NNImageToTensor: @unchecked Sendable {
    /// Image pixel position of a tensor pixel centre: (a*x + b*y + c, d*x + e*y + f),
    /// with (x, y) the tensor pixel centre (column + 0.5, row + 0.5).
    public struct Transform: Sendable, Equatable {
        public var a: Float, b: Float, c: Float, d: Float, e: Float, f: Float

        public init(a: Float, b: Float, c: Float, d: Float, e: Float, f: Float) {
            (self.a, self.b, self.c, self.d, self.e, self.f) = (a, b, c, d, e, f)
        }

        /// Stretches the image region (x, y, width, height), in image pixels, over the whole tensor.
        public static func region(x: Float, y: Float, width: Float, height: Float,
                                  tensorWidth: Int, tensorHeight: Int) -> Transform {
            Transform(a: width / Float(tensorWidth), b: 0, c: x, d: 0, e: height / Float(tensorHeight), f: y)
        }
    }

    /// Outside the image: repeat the edge pixels, or use one value (after mapping) per channel.
    public enum Border: Sendable, Equatable {
        case replicate
        case constant(Float, Float, Float)
    }

    private let kernel: TypedKernel<KernelLibrary.NnImageToTensorPush>

    public init(context: GPUContext, kernels: NNKernels? = nil) throws {
        kernel = try (kernels ?? NNKernels(context: context)).kernel(KernelLibrary.NnImageToTensorPush.self)
    }

    /// Records the write of `tensor` (packed NHWC4, 3 channels) from `image`.
    public func record(on recorder: CommandRecorder, image: GPUImage, transform: Transform, into tensor: NNTensor,
                       scale: (Float, Float, Float) = (1, 1, 1), offset: (Float, Float, Float) = (0, 0, 0),
                       border: Border = .replicate) throws {
        let geometry = NNTensorGeometry(shape: tensor.shape)
        guard tensor.layout == .packedNHWC4, geometry.channels == 3, tensor.byteOffset % 16 == 0,
              tensor.byteOffset + geometry.vec4Count * 16 <= tensor.buffer.size else {
            throw NNError.invalidArgument("an image can only be written into a packed [1, H, W, 3] tensor, not \(tensor.shape)")
        }
        let borderValue: SIMD4<Float>
        switch border {
        case .replicate: borderValue = SIMD4(0, 0, 0, 0)
        case .constant(let r, let g, let b): borderValue = SIMD4(r, g, b, 0)
        }
        let push = KernelLibrary.NnImageToTensorPush(
            row0: SIMD4(transform.a, transform.b, transform.c, 0), row1: SIMD4(transform.d, transform.e, transform.f, 0),
            scale: SIMD4(scale.0, scale.1, scale.2, 0), offset: SIMD4(offset.0, offset.1, offset.2, 0), border: borderValue,
            size: SIMD2(Int32(geometry.width), Int32(geometry.height)), outOffset: Int32(tensor.byteOffset / 16),
            useBorder: border == .replicate ? 0 : 1)
        recorder.dispatch(kernel, [.sampledImage(image, .linear), .buffer(tensor.buffer)], push: push,
                          groups: LaunchBuilder.groups(covering: geometry.pixels))
    }
}
