import VelvetGPU

/// One frame handed to the effects: to `record` on the GPU thread, to `look(ahead:)` on the
/// look-ahead thread.
public struct EffectFrame {
    /// 0-based position in the input.
    public let index: Int
    /// Presentation time in seconds.
    public let time: Double
    /// The input is a still image (a photo), not a video.
    public let isStillImage: Bool
    /// The upright working image as decoded (rgba16f, R'G'B' full range). Do not write it.
    public let input: GPUImage
    /// Where the effects write their result (same size and format): all of it, whenever
    /// they report a change (pixels outside a changed region are read too, as neighbours).
    public let output: GPUImage
    /// To `look(ahead:)`: the frame before's working image (nil for the first frame), intact
    /// until this call returns, so a comparison with the last frame needs no copy. nil to `record`.
    public let previousInput: GPUImage?
    /// A later frame's working image: frame `index`'s, complete for work recorded or submitted
    /// after the call; nil for a frame the look-ahead has not been shown (past the input's end).
    public typealias Upcoming = @Sendable (_ index: Int) throws -> GPUImage?
    /// To `record`, with a look-ahead: the working images of the frames after this one that
    /// the look-ahead has been shown. Where the renderer converts one for this (a GPU device,
    /// where the look-ahead keeps none), it reuses it as that frame's input when its turn comes,
    /// so the frame is converted once. nil without a look-ahead.
    public var upcoming: Upcoming?

    public init(index: Int, time: Double, isStillImage: Bool, input: GPUImage, output: GPUImage, previousInput: GPUImage? = nil) {
        (self.index, self.time, self.isStillImage, self.input, self.output) = (index, time, isStillImage, input, output)
        self.previousInput = previousInput
    }
}

/// What a render knows of its input before the first frame is decoded (`FrameEffect.prepare`).
public struct EffectInput: Sendable, Equatable {
    /// A still image (a photo), not a video.
    public var isStillImage: Bool
    /// The renderer shows each frame to `look(ahead:)` before recording it.
    public var looksAhead: Bool
    /// The upright frame size the video stream declares; nil for a still (its EXIF
    /// orientation is read from the decoded frame).
    public var uprightSize: (width: Int, height: Int)?

    public init(isStillImage: Bool, looksAhead: Bool, uprightSize: (width: Int, height: Int)?) {
        (self.isStillImage, self.looksAhead, self.uprightSize) = (isStillImage, looksAhead, uprightSize)
    }

    public static func == (a: EffectInput, b: EffectInput) -> Bool {
        a.isStillImage == b.isStillImage && a.looksAhead == b.looksAhead
            && a.uprightSize?.width == b.uprightSize?.width && a.uprightSize?.height == b.uprightSize?.height
    }
}

/// What the effects changed in a frame. When the output has the input's layout, colour and
/// orientation, unchanged pixels are not converted back: an unchanged frame's decoded planes
/// go to the encoder as they are (bit-exact, no GPU work; `RenderOptions.forcesGPURoundTrip`
/// sends them through the GPU anyway), and a changed frame adds only its change to them.
public enum FrameChange: Sendable, Equatable {
    case none
    /// Only this region of `output` differs from the input (the rest of `output` equals it).
    case region(PixelRegion)
    case whole
}

/// What the renderer runs between decode and encode (the beauty pipeline). Kept as a
/// protocol so media I/O knows nothing of faces. Called from the GPU thread, but for
/// `look(ahead:)`, which runs on the renderer's look-ahead thread.
public protocol FrameEffect: AnyObject, Sendable {
    /// Loads what the effect needs before its first frame (its models), once per render and
    /// before any other call: the renderer runs it on a thread of its own while it opens the
    /// decoder and the encoder, and waits for it before showing or recording the first frame.
    /// An error fails the render.
    func prepare(for input: EffectInput) throws
    /// Records the effects of one frame on `recorder` and says what they changed. The input
    /// is complete when this is called, so an effect may also submit work of its own first
    /// (and wait for it) before recording the rest on `recorder`.
    func record(_ frame: EffectFrame, on recorder: CommandRecorder) throws -> FrameChange
    /// The smallest upright frame, in pixels per side, the effects can work on; smaller
    /// inputs are refused before decoding.
    var minimumFrameSide: Int { get }
    /// GPU memory the effects keep per pixel of the frame, for the memory check.
    var workingBytesPerPixel: Int { get }
    /// The effects draw colour that means something (a debug view's colour coding), so a
    /// grey input is written in colour rather than in its own grey format.
    var drawsInColour: Bool { get }
    /// GPU memory the effects keep per pixel on top of that when the render looks ahead.
    var lookAheadBytesPerPixel: Int { get }
    /// Frames the effect wants to see before it records one (offline look-ahead): on a
    /// video, the renderer shows each frame to `look(ahead:)` as it is decoded and calls
    /// `record` for frame N once frame N + K has been looked at (or the input has ended),
    /// holding the decoded frames in between. 0: `record` alone, frame by frame (stills
    /// always).
    var lookAhead: Int { get }
    /// Sees the next frame of the input, in order, before any frame K or more before it is
    /// recorded. `frame.output` is not to be written. It runs on a thread of its own (the
    /// renderer's look-ahead thread), possibly while `record` runs for an earlier frame: what
    /// the two share must be safe to touch from both.
    func look(ahead frame: EffectFrame) throws
    /// Frames the renderer may have submitted to the GPU and not yet waited for when it calls
    /// `record` (1 or 2). 2 lets frame N + 1 be recorded while frame N runs; an effect says 2
    /// only if it reads back nothing of a frame before `completed(frame:)` for it.
    var framesInFlight: Int { get }
    /// Called once the GPU work recorded for frame `index` has completed (frames in order):
    /// what the effect downloaded for that frame may be read now.
    func completed(frame index: Int) throws
    /// What the user should hear about the render once it is done (a choice that selected nothing).
    var warnings: [String] { get }
}

extension FrameEffect {
    public func prepare(for input: EffectInput) throws {}
    public var minimumFrameSide: Int { 1 }
    public var workingBytesPerPixel: Int { 0 }
    public var drawsInColour: Bool { false }
    public var lookAheadBytesPerPixel: Int { 0 }
    public var lookAhead: Int { 0 }
    public func look(ahead frame: EffectFrame) throws {}
    public var framesInFlight: Int { 1 }
    public func completed(frame index: Int) throws {}
    public var warnings: [String] { [] }
}
