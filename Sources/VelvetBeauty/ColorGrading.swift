import VelvetGPU
import VelvetKernels

/// Applies a colour LUT on the GPU (`lut_apply.comp`), to the whole frame or through a
/// weight mask (skin whitening / warming), with a strength that scales the effect linearly
/// from 0 (identity, bit-exact) to 1 (the full LUT).
public final class ColorGrading: @unchecked Sendable {
    public let lut: ColorLUT
    private let kernel: TypedKernel<KernelLibrary.LutApplyPush>
    private let maskedKernel: TypedKernel<KernelLibrary.LutApplyPush>
    private let table: GPUImage
    private let noMask: GPUImage

    public init(context: GPUContext, lut: ColorLUT) throws {
        self.lut = lut
        kernel = try TypedKernel(context: context)
        maskedKernel = try TypedKernel(context: context, specialization: ["USE_MASK": .int(1)])
        table = try GPUImage(context: context, width: lut.size * lut.size, height: lut.size, format: .rgba32f)
        noMask = try GPUImage(context: context, width: 1, height: 1, format: .r32f)
        // Slices side by side: texel (r + b * N, g).
        let n = lut.size
        var texels = [Float](repeating: 1, count: n * n * n * 4)
        for b in 0..<n { for g in 0..<n { for r in 0..<n {
            let entry = lut.entries[(b * n + g) * n + r]
            let index = (g * n * n + b * n + r) * 4
            texels[index] = entry.x; texels[index + 1] = entry.y; texels[index + 2] = entry.z
        } } }
        let recorder = try CommandRecorder(context: context)
        try texels.withUnsafeBytes { try recorder.upload($0, to: table) }
        try [Float(1)].withUnsafeBytes { try recorder.upload($0, to: noMask) }
        try recorder.submit().wait()
    }

    /// Records `destination = mix(source, lut(source), strength * mask)` over `region` (nil:
    /// the whole frame; pixels outside it are not written). `destination` may be `source`.
    public func record(on recorder: CommandRecorder, source: GPUImage, destination: GPUImage, mask: GPUImage? = nil,
                       strength: Float, region: PixelRegion? = nil) throws {
        guard (0...1).contains(strength) else { throw GPUError.invalidArgument("LUT strength \(strength) outside 0...1") }
        guard strength > 0 else {
            if source !== destination { try recorder.copy(source, to: destination) }
            return
        }
        guard let area = (region ?? PixelRegion(x: 0, y: 0, width: source.width, height: source.height))
            .clamped(width: source.width, height: source.height), !area.isEmpty else { return }
        let span = lut.domainMax - lut.domainMin
        let push = KernelLibrary.LutApplyPush(
            size: SIMD2(Int32(source.width), Int32(source.height)), origin: SIMD2(Int32(area.x), Int32(area.y)),
            extent: SIMD2(Int32(area.width), Int32(area.height)), lutSize: Int32(lut.size),
            domainMin: SIMD4(lut.domainMin.x, lut.domainMin.y, lut.domainMin.z, strength),
            domainScale: SIMD4(1 / span.x, 1 / span.y, 1 / span.z, 0))
        recorder.dispatch(mask == nil ? kernel : maskedKernel, [.sampledImage(source, .nearest), .sampledImage(table, .linear),
                                   .sampledImage(mask ?? noMask, .linear), .storageImage(destination)],
                          push: push, covering: area.width, area.height)
    }
}

/// The colour grade as a stage: the LUT over the whole frame, or through the skin stage's
/// blend weight (then only where the skin changed, and nowhere on a frame where it did not).
public final class GradeStage: BeautyStage {
    public static let section = "grade"

    private let grading: ColorGrading
    public let strength: Float
    public let throughSkinMask: Bool

    public init(grading: ColorGrading, strength: Float, throughSkinMask: Bool) {
        (self.grading, self.strength, self.throughSkinMask) = (grading, strength, throughSkinMask)
    }

    public var section: String? { Self.section }
    public var isIdle: Bool { strength == 0 }
    public var appliesUserMatte: Bool { true } // through the skin weights, which hold the matte; a frame grade ignores it
    public var isPointwise: Bool { true }

    public func record(on recorder: CommandRecorder, source: GPUImage, destination: GPUImage, frame: StageFrame) throws -> StageResult {
        if throughSkinMask {
            // Only where the frame changed: the weight is 0 elsewhere, and only that region reaches the output.
            guard let changed = frame.changed else { return .skipped }
            if source !== destination { try recorder.copy(source, to: destination) }
            try grading.record(on: recorder, source: source, destination: destination, mask: frame.skin?.weights, strength: strength,
                               region: changed)
            return .wrote(changed)
        }
        try grading.record(on: recorder, source: source, destination: destination, mask: nil, strength: strength)
        return .wrote(frame.whole)
    }
}
