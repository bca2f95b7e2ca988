import VelvetGPU
import VelvetKernels

/// Lipstick and blush for one frame (`makeup_apply.comp`, shapes in `MakeupGeometry`),
/// rebuilt from the frame's mesh so they follow the face. The frame is copied to the
/// destination, then only the makeup region is recomputed; with no face or both strengths
/// at 0 nothing is dispatched and the destination is an exact copy.
public final class MakeupPaint {
    public static let section = "makeup"

    public let context: GPUContext
    private let kernel: TypedKernel<KernelLibrary.MakeupApplyPush>
    /// The pass without lipstick, when the lip area is dispatched apart (`makeup_apply.comp`'s PART).
    private let blushPass: TypedKernel<KernelLibrary.MakeupApplyPush>?

    public convenience init(context: GPUContext) throws {
        try self.init(context: context, faceTableTexels: nil)
    }

    /// `faceTableTexels`: how the kernel reads its face table (`FaceTable`; nil: the device's
    /// way). `lipAreaApart`: the lip area in a pass of its own (nil: on CPU devices, which pay
    /// for the lipstick's code on every pixel of the region otherwise).
    init(context: GPUContext, faceTableTexels: Bool?, lipAreaApart: Bool? = nil) throws {
        self.context = context
        let table = FaceTable.specialization(context, texels: faceTableTexels)
        kernel = try TypedKernel(context: context, specialization: table)
        blushPass = lipAreaApart ?? (context.device.kind == .cpu)
            ? try TypedKernel(context: context, specialization: table.merging(["PART": .int(1)]) { $1 }) : nil
    }

    /// Records makeup on `image` into `destination` (same size and format, a different
    /// image); returns the pixels it may have changed (empty when it only copied).
    @discardableResult
    public func record(on recorder: CommandRecorder, image: GPUImage, faces: [BeautyFace], settings: MakeupSettings,
                       destination: GPUImage) throws -> PixelRegion {
        let settings = try settings.validated()
        if image !== destination { // in place, it writes only its region and reads only the pixel it writes
            try checkStageImages(image, destination)
            try recorder.copy(image, to: destination)
        }
        let geometry = MakeupGeometry(faces: faces, settings: settings)
        let region = geometry.region(width: image.width, height: image.height)
        guard !geometry.faces.isEmpty, !region.isEmpty else { return PixelRegion(x: 0, y: 0, width: 0, height: 0) }
        let floats = geometry.packed
        let buffer = try GPUBuffer.pooled(context: context, size: floats.count * 4)
        try floats.withUnsafeBytes { try recorder.upload($0, to: buffer) }
        recorder.beginSection(Self.section)
        let lip = settings.lipstick, blush = settings.blush
        let lipArea = geometry.lipArea(width: image.width, height: image.height).intersection(region)
        var push = KernelLibrary.MakeupApplyPush(
            origin: SIMD2(Int32(region.x), Int32(region.y)), regionSize: SIMD2(Int32(region.width), Int32(region.height)),
            faceCount: Int32(geometry.faces.count), blend: Self.blendCode(lip.blend),
            lipColour: SIMD4(lip.colour.red, lip.colour.green, lip.colour.blue, lip.strength),
            blushColour: SIMD4(blush.colour.red, blush.colour.green, blush.colour.blue, blush.strength),
            lipOrigin: SIMD2(Int32(lipArea.x), Int32(lipArea.y)), lipSize: SIMD2(Int32(lipArea.width), Int32(lipArea.height)))
        let bindings: [GPUBinding] = [.sampledImage(image, .nearest), .texels(buffer), .storageImage(destination), .buffer(buffer)]
        if let blushPass {
            recorder.dispatch(blushPass, bindings, push: push, covering: region.width, region.height)
            if !lipArea.isEmpty {
                push.origin = push.lipOrigin
                push.regionSize = push.lipSize
                recorder.dispatch(kernel, bindings, push: push, covering: lipArea.width, lipArea.height)
            }
        } else {
            recorder.dispatch(kernel, bindings, push: push, covering: region.width, region.height)
        }
        recorder.endSection()
        return region
    }

    private static func blendCode(_ blend: MakeupSettings.LipBlend) -> Int32 {
        switch blend {
        case .natural: return 0
        case .multiply: return 1
        case .softLight: return 2
        }
    }
}

/// Lipstick and blush as a stage of the chain.
public final class MakeupStage: BeautyStage {
    /// nil when idle (an idle stage builds no kernels).
    private let pipeline: MakeupPaint?
    public let settings: MakeupSettings
    public init(context: GPUContext, settings: MakeupSettings) throws {
        self.settings = try settings.validated()
        pipeline = settings.isIdentity ? nil : try MakeupPaint(context: context)
    }

    public var section: String? { MakeupPaint.section }
    public var isIdle: Bool { pipeline == nil }
    public var appliesUserMatte: Bool { false }
    public var isPointwise: Bool { true }

    public func record(on recorder: CommandRecorder, source: GPUImage, destination: GPUImage, frame: StageFrame) throws -> StageResult {
        guard let pipeline else { return .skipped }
        return .wrote(try pipeline.record(on: recorder, image: source, faces: frame.faces, settings: settings, destination: destination))
    }
}
