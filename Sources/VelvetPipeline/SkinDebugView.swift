import VelvetBeauty
import VelvetFace
import VelvetGPU
import VelvetKernels

/// Draws the zone map or the spot fills of one skin-pipeline run over the frame
/// (`debug_skin_view.comp`), for `--debug-view zones|spots`.
final class SkinDebugView {
    enum Mode: Int32 { case zones = 0, spots = 1 }

    private let kernel: TypedKernel<KernelLibrary.DebugSkinViewPush>

    init(context: GPUContext) throws {
        kernel = try TypedKernel(context: context)
    }

    /// `map`: the skin mask image (zones) or the spot-fixed image (spots).
    func record(on recorder: CommandRecorder, mode: Mode, frame: GPUImage, map: GPUImage, output: GPUImage) {
        let push = KernelLibrary.DebugSkinViewPush(size: SIMD2(Int32(output.width), Int32(output.height)), mode: mode.rawValue)
        recorder.dispatch(kernel, [.sampledImage(frame, .nearest), .sampledImage(map, .linear), .storageImage(output)],
                          push: push, covering: output.width, output.height)
    }
}

/// `--debug-view`: the chain's last stage, drawing a view of the frame's pipeline instead of
/// the result: the tracked mesh (the chain then holds no other stage), the blend weight, the
/// zone map or the spot fills the skin stage left on the frame.
final class DebugViewStage: BeautyStage {
    private let view: BeautyOptions.DebugView
    private let overlay: FaceOverlay
    private let skinView: SkinDebugView

    init(context: GPUContext, view: BeautyOptions.DebugView) throws {
        self.view = view
        overlay = try FaceOverlay(context: context)
        skinView = try SkinDebugView(context: context)
    }

    var section: String? { "debug-view" }
    var isIdle: Bool { false }
    var appliesUserMatte: Bool { true }

    func record(on recorder: CommandRecorder, source: GPUImage, destination: GPUImage, frame: StageFrame) throws -> StageResult {
        switch view {
        case .landmarks:
            try overlay.record(on: recorder, input: frame.input, output: destination, faces: frame.trackedFaces, mask: frame.personMask)
        case .mask:
            guard let weights = frame.skin?.weights else { return .skipped }
            overlay.recordMask(on: recorder, mask: weights, output: destination)
        case .teeth, .eyes, .underEye, .shine:
            return .skipped // drawn by their own stages (BeautyEffect.stages)
        case .zones, .spots:
            // No face: the frame as it is (the skin stage wrote an exact copy).
            guard let map = view == .zones ? frame.skin?.mask : frame.skin?.spots else { return .skipped }
            skinView.record(on: recorder, mode: view == .zones ? .zones : .spots, frame: frame.input, map: map, output: destination)
        }
        return .wrote(frame.whole)
    }
}
