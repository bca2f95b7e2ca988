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

    private let kernel: ComputeKernel

    public init(context: GPUContext, kernels: NNKernels? = nil) throws {
        kernel = try (kernels ?? NNKernels(context: context)).kernel(KernelLibrary.nnImageToTensor)
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
        var push = PushConstants()
        push.vec4(transform.a, transform.b, transform.c, 0)
        push.vec4(transform.d, transform.e, transform.f, 0)
        push.vec4(scale.0, scale.1, scale.2, 0)
        push.vec4(offset.0, offset.1, offset.2, 0)
        switch border {
        case .replicate: push.vec4(0, 0, 0, 0)
        case .constant(let r, let g, let b): push.vec4(r, g, b, 0)
        }
        push.ivec2(Int32(geometry.width), Int32(geometry.height))
        push.int(Int32(tensor.byteOffset / 16))
        push.int(border == .replicate ? 0 : 1)
        recorder.dispatch(kernel, [.sampledImage(image, .linear), .buffer(tensor.buffer)], push: push,
                          groups: LaunchBuilder.groups(covering: geometry.pixels))
    }
}
