import VelvetBeauty
import VelvetFace
import VelvetGPU

/// The stage chains a render runs on a frame. Without per-face settings (`BeautyOptions.others`,
/// a preset's `others` section) one chain treats every face. With them two passes do: the
/// chain of the preset's own settings treats the largest face (as `--faces largest` picks it),
/// then the chain of `others`' settings treats the rest on that output, so each face gets its
/// own settings. The frame-wide stages (sharpen, a LUT over the whole frame) run once, in the
/// first pass; a LUT through the skin mask runs in both, each through its own faces' mask.
/// A debug view shows the preset's own settings on every face (one pass).
final class FacePasses {
    private let context: GPUContext
    private let first: BeautyChain
    /// The other faces' chain, and the largest face's track (nil: one pass).
    private var rest: (chain: BeautyChain, largest: FaceSelector)?
    /// The first pass's output, which the second reads.
    private var between: GPUImage?

    init(context: GPUContext, options: BeautyOptions, sidecars: RenderSidecars, capturesWeights: Bool = false) throws {
        self.context = context
        first = BeautyChain(context: context, stages: try BeautyEffect.stages(options: options, sidecars: sidecars, context: context,
                                                                              capturesWeights: capturesWeights))
        if var others = options.others, options.debugView == nil {
            others.skin.sharpen = 0
            if others.grade?.throughSkinMask == false { others.grade = nil }
            others.measuresQuality = options.measuresQuality
            let stages = try BeautyEffect.stages(options: others, sidecars: sidecars, context: context, capturesWeights: capturesWeights)
            rest = (BeautyChain(context: context, stages: stages), FaceSelector(.largest))
        }
    }

    /// Whether the frame is treated in two passes.
    var isSplit: Bool { rest != nil }

    /// The skin stage a frame's front may be recorded ahead on (`SkinStage.recordFront`): the
    /// one pass's first stage. nil with two passes (the second reads the first's output).
    var frontStage: SkinStage? { rest == nil ? first.stages.first as? SkinStage : nil }

    /// The tracker's faces as the stages take them. A face the tracker did not see in this
    /// frame (held, fading out, or bridged across a gap) is measured apart from its track:
    /// what its stages measure there (a covered face, an empty background) joins no average
    /// over frames, so the frames where it is seen again render as before it was lost.
    static func beautyFaces(_ faces: [Face]) throws -> [BeautyFace] {
        try faces.map { try BeautyFace(landmarks: $0.points, weight: $0.weight, track: $0.missedFrames == 0 ? $0.trackID : nil) }
    }

    /// Records the passes on `faces` (the selected ones; `trackedFaces`: all, for the landmarks
    /// view). `output` (the input's size and format) then holds the result wherever something
    /// changed (nil: nothing did). Also gives each pass's frame (what its skin stage left).
    func record(on recorder: CommandRecorder, input: GPUImage, faces: [Face], trackedFaces: [Face], personMask: GPUImage?,
                userMatte: GPUImage?, output: GPUImage) throws -> (changed: PixelRegion?, frames: [StageFrame]) {
        func frame(_ input: GPUImage, _ faces: [Face]) throws -> StageFrame {
            StageFrame(input: input, faces: try Self.beautyFaces(faces),
                       trackedFaces: trackedFaces, personMask: personMask, userMatte: userMatte)
        }
        guard var rest else {
            let only = try frame(input, faces)
            return (try first.record(on: recorder, frame: only, output: output), [only])
        }
        let largest = Set(rest.largest.select(faces).map(\.trackID))
        self.rest = rest
        let image = try betweenImage(like: output)
        let firstFrame = try frame(input, faces.filter { largest.contains($0.trackID) })
        let firstChanged = try first.record(on: recorder, frame: firstFrame, output: image)
        let restFrame = try frame(firstChanged == nil ? input : image, faces.filter { !largest.contains($0.trackID) })
        let restChanged = try rest.chain.record(on: recorder, frame: restFrame, output: output)
        if restChanged == nil, firstChanged != nil { try recorder.copy(image, to: output) }
        let changed = [firstChanged, restChanged].compactMap { $0 }.reduce(nil) { union, region in union.map { $0.union(region) } ?? region }
        return (changed, [firstFrame, restFrame])
    }

    private func betweenImage(like output: GPUImage) throws -> GPUImage {
        if let between, between.width == output.width, between.height == output.height, between.format == output.format { return between }
        let made = try GPUImage(context: context, width: output.width, height: output.height, format: output.format)
        between = made
        return made
    }
}
