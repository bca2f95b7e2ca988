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

    init(context: GPUContext, statsPerEntry: Int) throws {
        self.context = context
        self.statsPerEntry = statsPerEntry
        measure = try TypedKernel(context: context, specialization: ["MEASURE": .int(1)])
        apply = try TypedKernel(context: context)
    }

    /// Records both passes. `table` is the kernel's packed geometry (`face_table.glsl`
    /// directory, then the blocks); `destination` may be `source` when the apply pass reads only
    /// the pixel it writes (the measurement runs before it).
    func record(on recorder: CommandRecorder, source: GPUImage, destination: GPUImage, table: [Float], entries: Int,
                region: PixelRegion, strength: Float, showsMask: Bool) throws {
        let tableBuffer = try GPUBuffer.pooled(context: context, size: table.count * 4)
        try table.withUnsafeBytes { try recorder.upload($0, to: tableBuffer) }
        let stats = try GPUBuffer.pooled(context: context, size: entries * statsPerEntry * 4)
        if source !== destination { try recorder.copy(source, to: destination) }
        let push = Push(origin: SIMD2(Int32(region.x), Int32(region.y)), regionSize: SIMD2(Int32(region.width), Int32(region.height)),
                        faceCount: Int32(entries), strength: strength, view: showsMask ? 1 : 0)
        let bindings: [GPUBinding] = [.sampledImage(source, .nearest), .buffer(tableBuffer), .buffer(stats), .storageImage(destination)]
        recorder.dispatch(measure, bindings, push: push, groups: (entries, 1, 1))
        recorder.dispatch(apply, bindings, push: push, covering: region.width, region.height)
    }
}

/// The push block every feature kernel declares (`origin`, `regionSize`, `faceCount`,
/// `strength`, `view`): a generated struct conforms through its memberwise init, so a kernel
/// whose block differs does not compile as a `FeaturePass`.
protocol FeaturePassPush: KernelPushBlock {
    init(origin: SIMD2<Int32>, regionSize: SIMD2<Int32>, faceCount: Int32, strength: Float, view: Int32)
}

extension KernelLibrary.TeethWhitenPush: FeaturePassPush {}
extension KernelLibrary.EyeBrightenPush: FeaturePassPush {}
extension KernelLibrary.UnderEyePush: FeaturePassPush {}
extension KernelLibrary.ShineControlPush: FeaturePassPush {}

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
