import VelvetFace
import VelvetGPU
import VelvetKernels

/// The two dispatches a per-feature retouch stage (teeth, eyes, ...) records over its
/// landmark regions: a measurement pass, one workgroup per entry (a mouth, an eye), that
/// writes `statsPerEntry` floats per entry from the feature's own pixels (no readback), then
/// the apply pass over the changed region, which reads them. Both variants of the kernel
/// (`MEASURE` = 1 and 0) take the same bindings (source, geometry table, stats, destination)
/// and push block (region origin and size, entry count, strength, mask view): `Push`, the
/// kernel's generated block, which says so by conforming to `FeaturePassPush`.
struct FeaturePass<Push: FeaturePassPush> {
    let context: GPUContext
    let statsPerEntry: Int
    private let measure: TypedKernel<Push>
    private let apply: TypedKernel<Push>
    /// The measurements of each entry, smoothed over frames by track between the two passes.
    private let memory: MeasurementMemory

    init(context: GPUContext, statsPerEntry: Int, positionStats: Range<Int>) throws {
        self.context = context
        self.statsPerEntry = statsPerEntry
        measure = try TypedKernel(context: context, specialization: ["MEASURE": .int(1)])
        apply = try TypedKernel(context: context)
        memory = try MeasurementMemory(context: context, stride: statsPerEntry, validity: 0, passedRaw: positionStats)
    }

    /// Forgets every entry: a frame where the stage found none.
    func forget() {
        memory.forgetAll()
    }

    /// Records both passes. `table` is the kernel's packed geometry (`face_table.glsl`
    /// directory, then the blocks); `keys`, one per entry, what each measurement belongs to;
    /// `destination` may be `source` when the apply pass reads only the pixel it writes (the
    /// measurement runs before it).
    func record(on recorder: CommandRecorder, source: GPUImage, destination: GPUImage, table: [Float], keys: [MeasurementKey?],
                region: PixelRegion, strength: Float, showsMask: Bool) throws {
        let entries = keys.count
        let tableBuffer = try GPUBuffer.pooled(context: context, size: table.count * 4)
        try table.withUnsafeBytes { try recorder.upload($0, to: tableBuffer) }
        let stats = try GPUBuffer.pooled(context: context, size: entries * statsPerEntry * 4)
        if source !== destination { try recorder.copy(source, to: destination) }
        let push = Push(origin: SIMD2(Int32(region.x), Int32(region.y)), regionSize: SIMD2(Int32(region.width), Int32(region.height)),
                        faceCount: Int32(entries), strength: strength, view: showsMask ? 1 : 0)
        let bindings: [GPUBinding] = [.sampledImage(source, .nearest), .buffer(tableBuffer), .buffer(stats), .storageImage(destination)]
        recorder.dispatch(measure, bindings, push: push, groups: (entries, 1, 1))
        try memory.record(on: recorder, stats: stats, keys: keys)
        recorder.dispatch(apply, bindings, push: push, covering: region.width, region.height)
    }
}

/// The push block every feature kernel declares (`origin`, `regionSize`, `faceCount`,
/// `strength`, `view`): a generated struct conforms through its memberwise init, so a kernel
/// whose block differs does not compile as a `FeaturePass`.
public protocol FeaturePassPush: KernelPushBlock {
    init(origin: SIMD2<Int32>, regionSize: SIMD2<Int32>, faceCount: Int32, strength: Float, view: Int32)
}

extension KernelLibrary.TeethWhitenPush: FeaturePassPush {}
extension KernelLibrary.EyeBrightenPush: FeaturePassPush {}
extension KernelLibrary.UnderEyePush: FeaturePassPush {}
extension KernelLibrary.ShineControlPush: FeaturePassPush {}

/// A retouch stage's settings: one strength, 0 = the stage is left out (bit-exact identity).
public protocol RetouchSettings: Sendable {
    var strength: Float { get }
    var isIdentity: Bool { get }
    func validated() throws -> Self
}

extension TeethSettings: RetouchSettings {}
extension EyeBrightenSettings: RetouchSettings {}
extension UnderEyeSettings: RetouchSettings {}
extension ShineSettings: RetouchSettings {}

/// What makes one per-feature retouch stage (`FeatureStage`): its settings, its kernel's push
/// block, where it acts (rebuilt from every frame's faces) and how that is packed for the kernel.
public protocol FeatureGeometry: Sendable {
    associatedtype Settings: RetouchSettings
    associatedtype Push: FeaturePassPush
    /// The stage's timed section (`--json`'s `gpu_ms`).
    static var sectionName: String { get }
    /// Floats the measurement writes per entry; the first is 1 when it succeeded, 0 when not.
    static var statsPerEntry: Int { get }
    /// Those floats that are frame positions (not smoothed over frames: a moving face would
    /// lag).
    static var positionStats: Range<Int> { get }
    /// Whether the apply pass reads only the pixel it writes (the measurement runs before it),
    /// so that the stage can work in place.
    static var isPointwise: Bool { get }
    init(faces: [BeautyFace], width: Int, height: Int)
    /// Mouths, eyes or regions: one measurement workgroup each.
    var entryCount: Int { get }
    /// What each entry's measurement belongs to (its face's track and part), in entry order.
    var entryKeys: [MeasurementKey?] { get }
    /// The frame pixels the stage may change (with `showingMask`, what its debug view draws).
    func region(width: Int, height: Int, showingMask: Bool) -> PixelRegion
    /// The kernel's geometry buffer (`face_table.glsl` directory, then the blocks).
    func packed(width: Int, height: Int) -> [Float]
}

/// A per-feature retouch stage of the chain (teeth, eyes, under-eye, shine; each file names
/// its own, e.g. `TeethStage`): the geometry of the frame's faces, then `FeaturePass`'s
/// measurement and apply pass over its region; with no entry, or an empty region, it writes
/// nothing. Its debug view (`showsMask`) draws the stage's weight instead of the result.
public final class FeatureStage<Geometry: FeatureGeometry>: BeautyStage {
    public static var sectionName: String { Geometry.sectionName }

    public let settings: Geometry.Settings
    /// Draws the stage's weight over the frame instead of the result (`--debug-view`).
    public let showsMask: Bool
    /// nil when idle (see `BeautyStage.isIdle`: an idle stage builds no kernels).
    private let pass: FeaturePass<Geometry.Push>?

    public init(context: GPUContext, settings: Geometry.Settings, showsMask: Bool = false) throws {
        self.settings = try settings.validated()
        self.showsMask = showsMask
        pass = settings.isIdentity && !showsMask ? nil
            : try FeaturePass(context: context, statsPerEntry: Geometry.statsPerEntry, positionStats: Geometry.positionStats)
    }

    public var section: String? { Self.sectionName }
    public var isIdle: Bool { pass == nil }
    public var appliesUserMatte: Bool { false }
    public var isPointwise: Bool { Geometry.isPointwise }

    public func record(on recorder: CommandRecorder, source: GPUImage, destination: GPUImage, frame: StageFrame) throws -> StageResult {
        guard let pass else { return .skipped }
        if source !== destination { try checkStageImages(source, destination) }
        let geometry = Geometry(faces: frame.faces, width: source.width, height: source.height)
        let region = geometry.region(width: source.width, height: source.height, showingMask: showsMask)
        guard geometry.entryCount > 0, !region.isEmpty else {
            pass.forget()
            return .skipped
        }
        try pass.record(on: recorder, source: source, destination: destination, table: geometry.packed(width: source.width, height: source.height),
                        keys: geometry.entryKeys, region: region, strength: settings.strength, showsMask: showsMask)
        return .wrote(region)
    }
}

extension FeatureGeometry {
    public static var positionStats: Range<Int> { 0..<0 }
}

extension PixelRegion {
    /// The pixels covered by any of `boxes` (low and high corners, in pixels), clamped to a
    /// `width` x `height` frame; empty when none lies inside.
    static func covering(_ boxes: [(SIMD2<Float>, SIMD2<Float>)], width: Int, height: Int) -> PixelRegion {
        var result: PixelRegion? = nil
        for (low, high) in boxes {
            let x0 = Int(low.x.rounded(.down)), y0 = Int(low.y.rounded(.down))
            let box = PixelRegion(x: x0, y: y0, width: Int(high.x.rounded(.up)) - x0, height: Int(high.y.rounded(.up)) - y0)
            guard let clamped = box.clamped(width: width, height: height) else { continue }
            result = result.map { $0.union(clamped) } ?? clamped
        }
        return result ?? PixelRegion(x: 0, y: 0, width: 0, height: 0)
    }
}
