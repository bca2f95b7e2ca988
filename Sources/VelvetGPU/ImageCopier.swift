import VelvetKernels

/// Copies one image into another of the same size and format, the way that is fast on the
/// device: on a GPU a compute kernel (`image_copy.comp`), since `vkCmdCopyImage` on the H200's
/// compute queue took ~0.3 ms for a 1080p rgba16f frame (docs/PERFORMANCE.md); on a CPU device
/// (lavapipe) the transfer, which is a memcpy there. Both give the same bytes.
public final class ImageCopier {
    public enum Method: Sendable { case transfer, kernel }
    public let method: Method
    /// Made only for the kernel method (a CPU device compiles nothing for it).
    private let kernel: TypedKernel<KernelLibrary.ImageCopyPush>?

    /// The device's way: the transfer on a CPU device, the kernel otherwise.
    public static func method(for context: GPUContext) -> Method {
        context.device.kind == .cpu ? .transfer : .kernel
    }

    /// `method` nil: the device's (`method(for:)`).
    public init(context: GPUContext, method: Method? = nil) throws {
        let method = method ?? Self.method(for: context)
        self.method = method
        kernel = method == .kernel ? try TypedKernel(context: context) : nil
    }

    public func record(on recorder: CommandRecorder, from source: GPUImage, to destination: GPUImage) throws {
        guard let kernel else { return try recorder.copy(source, to: destination) }
        guard source.width == destination.width, source.height == destination.height, source.format == destination.format,
              source !== destination else {
            throw GPUError.invalidArgument("copy between images of different size or format, or onto itself")
        }
        recorder.dispatch(kernel, [.sampledImage(source, .nearest), .storageImage(destination)],
                          push: KernelLibrary.ImageCopyPush(size: SIMD2(Int32(source.width), Int32(source.height))),
                          covering: source.width, source.height)
    }
}
