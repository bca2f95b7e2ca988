import Foundation
import VelvetGPU
import VelvetKernels
import VelvetFace

/// Smoothing to a measured target: `strength` means the share of each face's blotch band
/// (quality metric M5) that is removed, whatever the face. For every face, on the GPU,
/// the mid band (G(0.01 IOD) - G(0.06 IOD) of Y') is measured in its cheek and forehead
/// discs in the input, the spot-fixed and the smoothed image, and the blend gain that
/// leaves `settings.midBandTarget` of the input's energy is solved for
/// (`beauty_fit_reduce.comp`); the gain is averaged over frames by track
/// (`MeasurementMemory`), and the blend weighs each face by it. With
/// `measure`, the same discs give the output's achieved M5, M6 and M8.
final class StrengthFit {
    /// A face's achieved figures, from `measure`'s readback.
    struct Achieved: Sendable, Equatable {
        var midBandRatio: Double?
        var fineBandRatio: Double?
        var colourShift: Double?
    }

    static let patch = 64
    static let stride = 16
    static let discs = 3
    static let resultStride = 8
    static let measureStride = 20
    /// The gain never exceeds this (a face whose mask barely reaches its discs would
    /// otherwise get the full effect everywhere else).
    static let maxGain: Float = 4

    private let context: GPUContext
    private let pool: ImagePool
    private let sample: TypedKernel<KernelLibrary.BeautyFitSamplePush>
    private let sampleMeasure: TypedKernel<KernelLibrary.BeautyFitSamplePush>
    private let blur: TypedKernel<KernelLibrary.BeautyFitBlurPush>
    private let reduce: TypedKernel<KernelLibrary.BeautyFitReducePush>
    private let reduceMeasure: TypedKernel<KernelLibrary.BeautyFitReducePush>
    private let dummy: GPUImage
    private let memory: MeasurementMemory

    init(context: GPUContext, pool: ImagePool) throws {
        self.context = context
        self.pool = pool
        sample = try TypedKernel(context: context)
        sampleMeasure = try TypedKernel(context: context, specialization: ["MEASURE": .int(1)])
        blur = try TypedKernel(context: context)
        reduce = try TypedKernel(context: context)
        reduceMeasure = try TypedKernel(context: context, specialization: ["MEASURE": .int(1)])
        dummy = try GPUImage(context: context, width: 1, height: 1, format: .rgba16f)
        memory = try MeasurementMemory(context: context, stride: Self.resultStride, validity: nil)
    }

    /// Per face (in `faces`' order): disc centres, radius, pitch, sigmas, patch half-side,
    /// samples per side, target, largest gain, the distance over which the blend fades in
    /// from the frame's edge (layout in beauty_fit_common.glsl).
    static func parameters(faces: [BeautyFace], settings: BeautySettings) -> [Float] {
        faces.flatMap { face -> [Float] in
            let iod = max(face.interOcularDistance, 1)
            let pitch = max(1, 0.01 * iod)
            let radius = 0.12 * iod
            let fine = max(0.5, 0.01 * iod) / pitch
            let middle = 0.06 * iod / pitch
            let halfSide = radius + (3 * middle + 1) * pitch
            let samples = min(Float(patch), (2 * halfSide / pitch).rounded(.up) + 1)
            let centres = [MeshRegion.cheekCentres.right, MeshRegion.cheekCentres.left, MeshRegion.foreheadCentre]
                .flatMap { [face.landmarks[$0].x, face.landmarks[$0].y] }
            return centres + [radius, pitch, fine, middle, halfSide, samples, settings.midBandTarget, maxGain,
                              settings.smoothingReach * face.faceSize, 0]
        }
    }

    /// Records the fit; returns the buffer of per-face gains (`resultStride` floats each,
    /// the gain first) the blend reads, averaged over frames by track unless
    /// `averagedOverFrames` is false (`GainWindow` then averages them).
    func record(on recorder: CommandRecorder, input: GPUImage, spotFixed: GPUImage, processed: GPUImage, mask: GPUImage,
                faces: [BeautyFace], settings: BeautySettings, averagedOverFrames: Bool = true) throws -> GPUBuffer {
        let params = try parameterBuffer(on: recorder, faces: faces, settings: settings)
        let results = try GPUBuffer.pooled(context: context, size: max(1, faces.count) * Self.resultStride * 4)
        let atlases = try bands(on: recorder, kernel: sample, images: (input, spotFixed, processed), mask: mask,
                                params: params, faceCount: faces.count)
        let push = KernelLibrary.BeautyFitReducePush(frameSize: SIMD2(Float(input.width), Float(input.height)),
                                                     faceCount: Int32(faces.count))
        recorder.dispatch(reduce, [.sampledImage(atlases.base, .nearest), .sampledImage(atlases.fine, .nearest),
                                   .sampledImage(atlases.middle, .nearest), .sampledImage(dummy, .linear),
                                   .sampledImage(dummy, .linear), .texels(params), .buffer(results)],
                          push: push, groups: (faces.count, 1, 1))
        if averagedOverFrames { try memory.record(on: recorder, stats: results, keys: faces.map { .of($0, part: 0) }) }
        return results
    }

    /// A frame without the fit: the faces' averaged gains start afresh on the next one.
    func skip() {
        memory.forgetAll()
    }

    /// Records the measurement of the output; read the returned buffer with `achieved`
    /// once the submission completed.
    func measure(on recorder: CommandRecorder, input: GPUImage, output: GPUImage, mask: GPUImage,
                 faces: [BeautyFace], settings: BeautySettings) throws -> GPUReadback {
        let params = try parameterBuffer(on: recorder, faces: faces, settings: settings)
        let results = try GPUBuffer.pooled(context: context, size: max(1, faces.count) * Self.measureStride * 4)
        let atlases = try bands(on: recorder, kernel: sampleMeasure, images: (input, output, dummy), mask: mask,
                                params: params, faceCount: faces.count)
        let push = KernelLibrary.BeautyFitReducePush(frameSize: SIMD2(Float(input.width), Float(input.height)),
                                                     faceCount: Int32(faces.count))
        recorder.dispatch(reduceMeasure, [.sampledImage(atlases.base, .nearest), .sampledImage(atlases.fine, .nearest),
                                          .sampledImage(atlases.middle, .nearest), .sampledImage(input, .linear),
                                          .sampledImage(output, .linear), .texels(params), .buffer(results)],
                          push: push, groups: (faces.count, 1, 1))
        return try recorder.download(results)
    }

    /// The achieved figures per face from a completed `measure` readback.
    static func achieved(_ readback: GPUReadback, faceCount: Int) -> [Achieved] {
        let raw = readback.raw
        func value(_ index: Int) -> Double { Double(raw.loadUnaligned(fromByteOffset: index * 4, as: Float.self)) }
        return (0..<faceCount).map { face in
            let base = face * measureStride
            let (midIn, midOut, fineIn, fineOut) = (value(base), value(base + 1), value(base + 2), value(base + 3))
            var worst: Double?
            for disc in 0..<2 where value(base + 16 + disc) > 0 {
                let at = base + 4 + 6 * disc
                let before = SIMD3(value(at), value(at + 1), value(at + 2)), after = SIMD3(value(at + 3), value(at + 4), value(at + 5))
                worst = max(worst ?? 0, ColourDifference.ciede2000(before, after))
            }
            return Achieved(midBandRatio: midIn > 0 ? midOut / midIn : nil, fineBandRatio: fineIn > 0 ? fineOut / fineIn : nil,
                            colourShift: worst)
        }
    }

    private func parameterBuffer(on recorder: CommandRecorder, faces: [BeautyFace], settings: BeautySettings) throws -> GPUBuffer {
        let floats = faces.isEmpty ? [Float](repeating: 0, count: Self.stride) : Self.parameters(faces: faces, settings: settings)
        let buffer = try GPUBuffer.pooled(context: context, size: floats.count * 4)
        try floats.withUnsafeBytes { try recorder.upload($0, to: buffer) }
        return buffer
    }

    /// Samples the discs into the atlas and blurs it with each face's fine and middle sigma.
    private func bands(on recorder: CommandRecorder, kernel: TypedKernel<KernelLibrary.BeautyFitSamplePush>, images: (GPUImage, GPUImage, GPUImage),
                       mask: GPUImage, params: GPUBuffer, faceCount: Int)
        throws -> (base: GPUImage, fine: GPUImage, middle: GPUImage) {
        let width = Self.discs * Self.patch, height = max(1, faceCount) * Self.patch
        let base = try pool.atLeast("fit.base", width: width, height: height, format: .rgba32f)
        let fineScratch = try pool.atLeast("fit.scratch.fine", width: width, height: height, format: .rgba32f)
        let middleScratch = try pool.atLeast("fit.scratch.middle", width: width, height: height, format: .rgba32f)
        let fine = try pool.atLeast("fit.fine", width: width, height: height, format: .rgba32f)
        let middle = try pool.atLeast("fit.middle", width: width, height: height, format: .rgba32f)
        let push = KernelLibrary.BeautyFitSamplePush(frameSize: SIMD2(Float(images.0.width), Float(images.0.height)),
                                                     faceCount: Int32(faceCount))
        recorder.dispatch(kernel, [.sampledImage(images.0, .linear), .sampledImage(images.1, .linear),
                                   .sampledImage(images.2, .linear), .sampledImage(mask, .linear), .texels(params),
                                   .storageImage(base)],
                          push: push, covering: width, height)
        // Both blurs a pass: across into the scratch images, then down into fine and middle.
        for (sources, destinations, vertical) in [((base, base), (fineScratch, middleScratch), 0), ((fineScratch, middleScratch), (fine, middle), 1)] {
            let blurPush = KernelLibrary.BeautyFitBlurPush(faceCount: Int32(faceCount), vertical: Int32(vertical))
            recorder.dispatch(blur, [.sampledImage(sources.0, .nearest), .sampledImage(sources.1, .nearest), .texels(params),
                                     .storageImage(destinations.0), .storageImage(destinations.1)],
                              push: blurPush, covering: width, height)
        }
        return (base, fine, middle)
    }
}
