import VelvetGPU

/// Measures what the frame achieved so far on each face the skin stage treated: M5, M6 and
/// M8 in the metrics' own discs (`render --json`'s `skin_quality`). Writes no image.
public final class SkinQualityStage: BeautyStage {
    private let pipeline: SkinPipeline
    public init(pipeline: SkinPipeline) { self.pipeline = pipeline }

    public var section: String? { SkinPipeline.Section.measure }
    public var isIdle: Bool { false }
    public var appliesUserMatte: Bool { true }

    public func record(on recorder: CommandRecorder, source: GPUImage, destination: GPUImage, frame: StageFrame) throws -> StageResult {
        if let skin = frame.skin {
            frame.quality = try pipeline.measure(on: recorder, input: frame.input, output: source, skin: skin)
        }
        return .skipped
    }
}
