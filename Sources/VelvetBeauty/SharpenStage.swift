import VelvetGPU
import VelvetKernels

/// The optional global unsharp mask after the skin composite (`beauty_sharpen.comp`,
/// `--sharpen`, default off). It touches every pixel, not just the skin.
public final class SharpenStage: BeautyStage {
    public static let section = SkinPipeline.Section.sharpen

    /// nil when idle (an idle stage builds no kernels).
    private let kernel: TypedKernel<KernelLibrary.BeautySharpenPush>?
    public let amount: Float

    /// `amount`: 0...2 (`BeautyPreset.Skin`'s `sharpen` knob).
    public init(context: GPUContext, amount: Float) throws {
        kernel = amount == 0 ? nil : try TypedKernel(context: context)
        self.amount = amount
    }

    public var section: String? { Self.section }
    public var isIdle: Bool { kernel == nil }
    public var appliesUserMatte: Bool { true } // as before the stage protocol: the matte gates the skin only

    public func record(on recorder: CommandRecorder, source: GPUImage, destination: GPUImage, frame: StageFrame) throws -> StageResult {
        guard let kernel else { return .skipped }
        let push = KernelLibrary.BeautySharpenPush(size: SIMD2(Int32(source.width), Int32(source.height)), amount: amount)
        recorder.dispatch(kernel, [.sampledImage(source, .nearest), .storageImage(destination)], push: push,
                          covering: source.width, source.height)
        return .wrote(frame.whole)
    }
}
