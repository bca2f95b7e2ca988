import VelvetGPU
import VelvetKernels

/// Runs the beauty stages in order on one frame: it owns the images they ping-pong through,
/// leaves out idle stages, times each stage and unions the regions they changed. The last
/// stage writes the frame's output directly where it can, a pointwise stage writes the image
/// it reads; a stage that does not apply the
/// user's matte itself reaches the output only through it (`matte_composite.comp`).
public final class BeautyChain {
    public let stages: [any BeautyStage]
    private let context: GPUContext
    private var images: [GPUImage] = []
    private lazy var matteComposite = try? TypedKernel<KernelLibrary.MatteCompositePush>(context: context)

    /// `stages` in order; the idle ones are dropped.
    public init(context: GPUContext, stages: [any BeautyStage]) {
        self.context = context
        self.stages = stages.filter { !$0.isIdle }
    }

    /// Records every stage on `frame` and says what changed; `output` (the input's size and
    /// format) then holds the result wherever something changed (nil: nothing did, and
    /// `output` may not have been written).
    public func record(on recorder: CommandRecorder, frame: StageFrame, output: GPUImage) throws -> PixelRegion? {
        var current = frame.input
        // With a user's matte: the image the first stage that does not apply it read.
        var matteBase: GPUImage?
        for (index, stage) in stages.enumerated() {
            let gated = frame.userMatte != nil && !stage.appliesUserMatte
            if gated, matteBase == nil { matteBase = current }
            let last = index == stages.count - 1
            let inPlace = stage.isPointwise && current !== frame.input && current !== matteBase
            let target = inPlace ? current
                : last && !gated && matteBase == nil && current !== output ? output
                : try workingImage(avoiding: [current, matteBase], like: output)
            if let section = stage.section { recorder.beginSection(section) }
            let result = try stage.record(on: recorder, source: current, destination: target, frame: frame)
            if stage.section != nil { recorder.endSection() }
            guard case .wrote(let region) = result else { continue }
            current = target
            if !region.isEmpty { frame.changed = frame.changed.map { $0.union(region) } ?? region }
        }
        guard let changed = frame.changed else { return nil }
        if let matteBase, let matte = frame.userMatte, current !== matteBase {
            if matteBase !== output { try recorder.copy(matteBase, to: output) }
            guard let matteComposite else { throw GPUError.unsupported("matte_composite.comp did not build") }
            let push = KernelLibrary.MatteCompositePush(size: SIMD2(Int32(output.width), Int32(output.height)))
            recorder.dispatch(matteComposite, [.sampledImage(current, .nearest), .sampledImage(matte, .nearest), .storageImage(output)],
                              push: push, covering: output.width, output.height)
        } else if current !== output {
            try recorder.copy(current, to: output)
        }
        return changed
    }

    /// One of the chain's working images (the output's size and format) that is none of `busy`.
    private func workingImage(avoiding busy: [GPUImage?], like output: GPUImage) throws -> GPUImage {
        if images.first.map({ $0.width != output.width || $0.height != output.height || $0.format != output.format }) == true {
            images = []
        }
        if let free = images.first(where: { image in !busy.contains { $0 === image } }) { return free }
        let made = try GPUImage(context: context, width: output.width, height: output.height, format: output.format)
        images.append(made)
        return made
    }
}
