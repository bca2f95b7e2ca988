import VelvetGPU
import VelvetKernels

/// Eye enlargement and face slimming for one frame, as one backward warp with bilinear
/// sampling (`reshape_warp.comp`, field in `ReshapeField`). The frame is copied to the
/// destination, then only the reshape region is warped; with no face or both strengths at
/// 0 nothing is dispatched and the destination is an exact copy.
public final class ReshapeWarp {
    public static let section = "reshape"

    public let context: GPUContext
    private let kernel: TypedKernel<KernelLibrary.ReshapeWarpPush>

    public convenience init(context: GPUContext) throws {
        try self.init(context: context, faceTableTexels: nil)
    }

    /// `faceTableTexels`: how the kernel reads its face table (`FaceTable`; nil: the device's way).
    init(context: GPUContext, faceTableTexels: Bool?) throws {
        self.context = context
        kernel = try TypedKernel(context: context, specialization: FaceTable.specialization(context, texels: faceTableTexels))
    }

    /// Records the warp of `image` into `destination` (same size and format, a different
    /// image) and returns the pixels it may have changed (empty when it only copied).
    @discardableResult
    public func record(on recorder: CommandRecorder, image: GPUImage, faces: [BeautyFace], settings: ReshapeSettings,
                       destination: GPUImage) throws -> PixelRegion {
        let settings = try settings.validated()
        try checkStageImages(image, destination)
        try recorder.copy(image, to: destination)
        let field = ReshapeField(faces: faces, settings: settings)
        let region = field.region(width: image.width, height: image.height)
        guard !field.isIdentity, !region.isEmpty else { return PixelRegion(x: 0, y: 0, width: 0, height: 0) }
        let tiles = field.tiles(in: region, side: Int(kernel.source.workgroupSize.x))
        guard !tiles.tiles.isEmpty else { return PixelRegion(x: 0, y: 0, width: 0, height: 0) }
        let floats = field.packed
        let geometry = try GPUBuffer.pooled(context: context, size: floats.count * 4)
        try floats.withUnsafeBytes { try recorder.upload($0, to: geometry) }
        // Read as texels of unsigned integers, as stored.
        let tileBuffer = try GPUBuffer.pooled(context: context, size: tiles.tiles.count * MemoryLayout<SIMD4<Int32>>.stride)
        try tiles.tiles.withUnsafeBytes { try recorder.upload($0, to: tileBuffer) }
        let termBuffer = try GPUBuffer.pooled(context: context, size: tiles.terms.count * MemoryLayout<UInt32>.stride)
        try tiles.terms.withUnsafeBytes { try recorder.upload($0, to: termBuffer) }
        recorder.beginSection(Self.section)
        let inverse = image.inverseSize
        let push = KernelLibrary.ReshapeWarpPush(origin: SIMD2(Int32(region.x), Int32(region.y)),
                                                 regionSize: SIMD2(Int32(region.width), Int32(region.height)),
                                                 inverseSize: SIMD2(inverse.0, inverse.1), faceCount: Int32(field.faces.count),
                                                 tileCount: Int32(tiles.tiles.count))
        // One workgroup per tile, in rows of at most 65535 (every device's limit or more).
        let count = tiles.tiles.count, row = min(count, 65535)
        recorder.dispatch(kernel, [.sampledImage(image, .linear), .texels(geometry), .storageImage(destination),
                                   .texels(tileBuffer, as: .unsigned), .texels(termBuffer, as: .unsigned), .buffer(geometry)],
                          push: push, groups: (row, (count + row - 1) / row, 1))
        recorder.endSection()
        return region
    }
}

/// The makeup and reshape stages read neighbours of the pixel they write, so they need a
/// separate destination of the input's size and format.
func checkStageImages(_ image: GPUImage, _ destination: GPUImage) throws {
    guard image !== destination else { throw BeautyError.invalidImage("the destination must be a different image from the input") }
    guard destination.width == image.width, destination.height == image.height, destination.format == image.format else {
        throw BeautyError.invalidImage("destination must match the input's size and format")
    }
}

/// Eye enlargement and face slimming as a stage of the chain (last: it moves what the
/// stages before it painted, as in the seed pipeline).
public final class ReshapeStage: BeautyStage {
    /// nil when idle (an idle stage builds no kernels).
    private let warp: ReshapeWarp?
    public let settings: ReshapeSettings
    public init(context: GPUContext, settings: ReshapeSettings) throws {
        self.settings = try settings.validated()
        warp = settings.isIdentity ? nil : try ReshapeWarp(context: context)
    }

    public var section: String? { ReshapeWarp.section }
    public var isIdle: Bool { warp == nil }
    public var appliesUserMatte: Bool { false }

    public func record(on recorder: CommandRecorder, source: GPUImage, destination: GPUImage, frame: StageFrame) throws -> StageResult {
        guard let warp else { return .skipped }
        return .wrote(try warp.record(on: recorder, image: source, faces: frame.faces, settings: settings, destination: destination))
    }
}
