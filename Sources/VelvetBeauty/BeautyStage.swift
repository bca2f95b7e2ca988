import VelvetFace
import VelvetGPU

/// One step of the beauty chain (`BeautyChain`): it reads the frame's current image (and,
/// from `StageFrame`, the untouched input, the faces, the person mask and what earlier
/// stages left there) and writes a new image. Its settings are fixed when it is made, so
/// whether it is idle is known before the first frame; the chain leaves idle stages out.
/// Adding a stage: its file (the stage and its knob table), its kernel, its test, and one
/// line in `BeautyEffect`'s stage list.
public protocol BeautyStage: AnyObject {
    /// The timed section the chain opens around the stage; nil when the stage times its own
    /// parts (the skin stages: `SkinPipeline.Section`).
    var section: String? { get }
    /// With these settings the stage never changes a frame. An idle stage builds no kernels:
    /// built, they would be queued for compiling and dropped with the stage, and on a start
    /// whose driver cache is cold the drop waits for a compile that nothing needs.
    var isIdle: Bool { get }
    /// Whether the stage applies the user's matte (`--matte-in`) itself; the chain composites
    /// the output of those that do not over their input through the matte.
    var appliesUserMatte: Bool { get }
    /// Each pixel it writes reads only that pixel of the source: the chain may then hand it
    /// its source as the destination (no copy of the frame).
    var isPointwise: Bool { get }
    /// Records the stage: writes all of `destination` (same size and format; another image
    /// than `source`, or `source` itself for a pointwise stage, which then need not write
    /// what it leaves unchanged) — or nothing, returning `.skipped`.
    func record(on recorder: CommandRecorder, source: GPUImage, destination: GPUImage, frame: StageFrame) throws -> StageResult
}

extension BeautyStage {
    public var isPointwise: Bool { false }
}

/// What a stage did to a frame.
public enum StageResult: Equatable {
    /// It wrote nothing: the frame's current image stays what it was.
    case skipped
    /// It wrote all of `destination`, which differs from its source only inside this region
    /// (empty: nowhere).
    case wrote(PixelRegion)
}

/// One frame on its way through the chain: what every stage may read, and what the skin
/// stages leave for the stages, views and sidecars after them.
public final class StageFrame {
    /// The decoded frame (rgba16f or rgba8): never written.
    public let input: GPUImage
    public let faces: [BeautyFace]
    /// The tracker's faces (for the landmarks view).
    public let trackedFaces: [Face]
    /// The person probability, stretched over the frame; nil means "person everywhere".
    public let personMask: GPUImage?
    /// The user's matte (`--matte-in`, frame size, 0...1 in r).
    public let userMatte: GPUImage?
    /// What the skin stage produced (mask, weights, spots), once it ran.
    public internal(set) var skin: SkinFrame?
    /// Each face's achieved figures, once `SkinQualityStage` ran.
    public internal(set) var quality: PendingSkinQuality?
    /// The pixels the stages so far changed (nil: none), kept by the chain.
    public internal(set) var changed: PixelRegion?

    public init(input: GPUImage, faces: [BeautyFace], trackedFaces: [Face] = [], personMask: GPUImage?, userMatte: GPUImage? = nil) {
        (self.input, self.faces, self.trackedFaces, self.personMask, self.userMatte) = (input, faces, trackedFaces, personMask, userMatte)
    }

    /// The whole frame as a region.
    public var whole: PixelRegion { PixelRegion(x: 0, y: 0, width: input.width, height: input.height) }
}
