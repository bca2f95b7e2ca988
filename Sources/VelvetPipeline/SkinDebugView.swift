import VelvetGPU
import VelvetKernels

/// Draws the zone map or the spot fills of one skin-pipeline run over the frame
/// (`debug_skin_view.comp`), for `--debug-view zones|spots`.
final class SkinDebugView {
    enum Mode: Int32 { case zones = 0, spots = 1 }

    private let kernel: ComputeKernel

    init(context: GPUContext) throws {
        kernel = try ComputeKernel(context: context, source: KernelLibrary.debugSkinView)
    }

    /// `map`: the skin mask image (zones) or the spot-fixed image (spots).
    func record(on recorder: CommandRecorder, mode: Mode, frame: GPUImage, map: GPUImage, output: GPUImage) {
        var push = PushConstants()
        push.ivec2(Int32(output.width), Int32(output.height))
        push.int(mode.rawValue)
        recorder.dispatch(kernel, [.sampledImage(frame, .nearest), .sampledImage(map, .linear), .storageImage(output)],
                          push: push, covering: output.width, output.height)
    }
}
