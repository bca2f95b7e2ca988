import VelvetFace
import VelvetGPU
import VelvetKernels
import VelvetMedia

/// What a beauty render reads or writes beside its input and output: faces from a track
/// file instead of the tracker (`--tracks`), a user's matte multiplied into the skin
/// weight (`--matte-in`), and the weight that was applied, written as a matte (`--matte`),
/// with the zone map as a second one (`--matte-zones`).
public struct RenderSidecars: @unchecked Sendable {
    public var tracks: TrackPlayback?
    /// The track file's path, for messages.
    public var tracksPath = ""
    public var matteIn: MatteReader?
    /// Opens the matte output for frames of the size given (known at the first frame).
    public var matteOut: ((_ width: Int, _ height: Int) throws -> MatteWriter)?
    /// The same for the zone map's matte.
    public var zonesOut: ((_ width: Int, _ height: Int) throws -> MatteWriter)?

    public init() {}
}

/// The blend weight of each frame on its way to the matte file: the weight image the blend
/// wrote is downloaded in the frame's own submission and encoded once that has completed
/// (`flush(through:)` from the effect's `completed(frame:)`, or at `finish`).
final class MatteRecording {
    private let open: (Int, Int) throws -> MatteWriter
    private var writer: MatteWriter?
    private struct Recorded {
        let frame: Int
        let readback: GPUReadback
        let time: Double
        let width: Int, height: Int
    }
    /// The frames recorded and not yet written, oldest first.
    private var pending: [Recorded] = []

    init(open: @escaping (Int, Int) throws -> MatteWriter) { self.open = open }

    func record(weights: GPUImage, frame: Int, time: Double, on recorder: CommandRecorder) throws {
        guard weights.format == .r16f else { throw BeautyPipelineError.matte("the blend weight is not r16f") }
        pending.append(Recorded(frame: frame, readback: try recorder.download(weights), time: time, width: weights.width,
                                height: weights.height))
    }

    /// Writes the frames recorded up to `index`; call once their submissions have completed.
    func flush(through index: Int = .max) throws {
        while let frame = pending.first, frame.frame <= index {
            pending.removeFirst()
            try write(frame)
        }
    }

    private func write(_ frame: Recorded) throws {
        let writer = try self.writer ?? open(frame.width, frame.height)
        self.writer = writer
        guard frame.width == writer.width, frame.height == writer.height else {
            throw BeautyPipelineError.matte("the frame is \(frame.width)x\(frame.height), the matte \(writer.width)x\(writer.height)")
        }
        try writer.write(Self.quantised(frame.readback.raw), time: frame.time)
    }

    /// What the matte's clock could not hold (frames dropped), one line.
    var warning: String? { writer?.warning }

    func finish() throws {
        try flush()
        guard let writer else { throw BeautyPipelineError.matte("no frame was rendered") }
        try writer.finish()
    }

    /// Half floats 0...1 as 16-bit values: round(w x 65535).
    static func quantised(_ raw: UnsafeRawBufferPointer) -> [UInt16] {
        let halves = raw.bindMemory(to: UInt16.self)
        return halves.map { bits in
            let weight = min(max(Float(Float16(bitPattern: bits)), 0), 1)
            return UInt16((weight * 65535).rounded())
        }
    }
}

/// The user's matte of each frame on the GPU (r16 unorm, frame size).
final class UserMatte {
    private let reader: MatteReader
    private var image: GPUImage?
    private var uploadedStill = false

    init(reader: MatteReader) { self.reader = reader }

    /// Records the upload of the next frame's matte (a still matte is uploaded once).
    func image(for frame: EffectFrame, on recorder: CommandRecorder) throws -> GPUImage {
        let width = frame.input.width, height = frame.input.height
        guard reader.width == width, reader.height == height else {
            throw MediaError.refused(path: reader.path, reason: "the matte is \(reader.width)x\(reader.height) and the frames "
                                     + "\(width)x\(height): give it the frames' size")
        }
        if let image, reader.isStillImage, uploadedStill { return image }
        let target = try image ?? GPUImage(context: frame.input.context, width: width, height: height, format: .r16)
        image = target
        let values = try reader.next()
        try values.withUnsafeBytes { try recorder.upload($0, to: target) }
        uploadedStill = reader.isStillImage
        return target
    }
}

/// `matte_zones.comp`: the zone map at frame size, into an image of its own (r16f).
final class ZoneMap {
    private let kernel: TypedKernel<KernelLibrary.MatteZonesPush>
    private var image: GPUImage?

    init(context: GPUContext) throws {
        kernel = try TypedKernel(context: context)
    }

    /// `mask`: the skin mask of the frame (nil: no face, the map is 0).
    func record(on recorder: CommandRecorder, mask: GPUImage?, frame: GPUImage) throws -> GPUImage {
        if image?.width != frame.width || image?.height != frame.height {
            image = try GPUImage(context: frame.context, width: frame.width, height: frame.height, format: .r16f)
        }
        let push = KernelLibrary.MatteZonesPush(size: SIMD2(Int32(frame.width), Int32(frame.height)), hasMask: mask == nil ? 0 : 1)
        recorder.dispatch(kernel, [.sampledImage(mask ?? frame, .linear), .storageImage(image!)], push: push,
                          covering: frame.width, frame.height)
        return image!
    }
}

/// A sidecar that cannot be written or read as the render goes.
public enum BeautyPipelineError: Error, CustomStringConvertible {
    case matte(String)
    public var description: String {
        switch self {
        case .matte(let reason): return "cannot write the matte: \(reason)"
        }
    }
}
