import CFFmpeg
import Foundation
import VelvetGPU
import VelvetKernels

/// The only place colour is converted: decoded planes -> the working image
/// (`yuv_to_rgb.comp`) and the working image -> planes for the encoder (`rgb_to_yuv.comp`).
///
/// Working colour space: non-linear R'G'B' in the stream's own primaries and transfer,
/// full range (0...1), upright, in rgba16f, unclamped.
final class ColorConverter: @unchecked Sendable {
    let context: GPUContext
    /// The kernels are specialised per plane layout (and delta mode): on a CPU Vulkan a branch
    /// on a push constant runs both of its sides. Made at first use, or by `prepare`.
    private var toWorkingKernels: [VideoPlaneLayout.Kind: TypedKernel<KernelLibrary.YuvToRgbPush>] = [:]
    private var toPlanesKernels: [PlanesKey: TypedKernel<KernelLibrary.RgbToYuvPush>] = [:]
    private let lock = NSLock()
    /// Bound to the slots a layout does not use (no plane, or no delta source).
    private let placeholder: GPUImage

    /// What `rgb_to_yuv.comp` is specialised for: the layout, the mode, the chroma block and
    /// its siting.
    private struct PlanesKey: Hashable {
        let kind: VideoPlaneLayout.Kind
        let delta: Bool
        let chromaShiftX: Int
        let chromaShiftY: Int
        let cosited: Bool

        init(layout: VideoPlaneLayout, color: ColorDescription, delta: Bool) {
            kind = layout.kind
            self.delta = delta
            (chromaShiftX, chromaShiftY) = layout.chromaShift
            cosited = color.chromaCositedX
        }
    }

    init(context: GPUContext) throws {
        self.context = context
        placeholder = try GPUImage(context: context, width: 1, height: 1, format: .r8)
    }

    /// Starts compiling the kernels for frames decoded as `input` and encoded as `output` in
    /// `outputColor` (in delta mode when `delta`), so that the first frame does not wait for them.
    func prepare(input: VideoPlaneLayout, output: VideoPlaneLayout, outputColor: ColorDescription, delta: Bool) throws {
        _ = try toWorkingKernel(input.kind)
        _ = try toPlanesKernel(PlanesKey(layout: output, color: outputColor, delta: delta))
    }

    private func toWorkingKernel(_ kind: VideoPlaneLayout.Kind) throws -> TypedKernel<KernelLibrary.YuvToRgbPush> {
        lock.lock()
        defer { lock.unlock() }
        if let kernel = toWorkingKernels[kind] { return kernel }
        let kernel = try TypedKernel<KernelLibrary.YuvToRgbPush>(context: context, specialization: ["LAYOUT_KIND": .int(kind.rawValue)])
        toWorkingKernels[kind] = kernel
        return kernel
    }

    private func toPlanesKernel(_ key: PlanesKey) throws -> TypedKernel<KernelLibrary.RgbToYuvPush> {
        lock.lock()
        defer { lock.unlock() }
        if let kernel = toPlanesKernels[key] { return kernel }
        let kernel = try TypedKernel<KernelLibrary.RgbToYuvPush>(
            context: context, specialization: ["LAYOUT_KIND": .int(key.kind.rawValue), "DELTA_MODE": .int(key.delta ? 1 : 0),
                                               "SUB_X": .int(Int32(1 << key.chromaShiftX)), "SUB_Y": .int(Int32(1 << key.chromaShiftY)),
                                               "COSITED": .int(key.cosited ? 1 : 0)])
        toPlanesKernels[key] = kernel
        return kernel
    }

    /// GPU images for the planes of a `width` x `height` frame (stored orientation).
    func makePlanes(_ layout: VideoPlaneLayout, width: Int, height: Int) throws -> [GPUImage] {
        try layout.planes.indices.map { index in
            let size = layout.planeSize(index, width: width, height: height)
            return try GPUImage(context: context, width: size.width, height: size.height, format: layout.planes[index].format)
        }
    }

    /// Records the upload of a decoded frame's planes, as they are.
    func recordUpload(of frame: MediaFrame, to planes: [GPUImage], on recorder: CommandRecorder) throws {
        let staged = FrameStaging.take(from: frame)
        for (index, image) in planes.enumerated() {
            let pitch = Int(velvet_frame_linesize(frame.pointer, Int32(index)))
            guard pitch > 0, let data = velvet_frame_data(frame.pointer, Int32(index)) else {
                throw MediaError.unsupported("frame plane \(index) has an unsupported memory layout")
            }
            let bytes = UnsafeRawBufferPointer(start: data, count: pitch * (image.height - 1) + image.width * image.format.bytesPerPixel)
            // Staged by the decode thread: the same rows, copied there already.
            if let staged, index < staged.count, staged[index].count >= bytes.count {
                try recorder.upload(staged[index], to: image, rowPitch: pitch)
            } else {
                try recorder.upload(bytes, to: image, rowPitch: pitch)
            }
        }
    }

    /// Records planes -> working image (rgba16f, upright size).
    func recordToWorking(planes: [GPUImage], layout: VideoPlaneLayout, color: ColorDescription, orientation: Orientation,
                         working: GPUImage, on recorder: CommandRecorder) throws {
        let luma = planes[0]
        let chroma = planes.count > 1 ? planes[1] : placeholder
        let chromaShift = layout.chromaShift
        let range = color.range(bitDepth: layout.bitDepth)
        let rows = color.toRGB
        // Chroma sample i sits at luma position i * subsampling + siting, so luma pixel x
        // reads chroma texel coordinate (x - siting) / subsampling + 0.5.
        let scaleX = 1 / Double(1 << chromaShift.x), scaleY = 1 / Double(1 << chromaShift.y)
        let sitingX = chromaShift.x == 0 || color.chromaCositedX ? 0 : 0.5
        let sitingY = chromaShift.y == 0 ? 0 : color.chromaOffsetY
        let push = KernelLibrary.YuvToRgbPush(
            outputSize: SIMD2(Int32(working.width), Int32(working.height)), storedSize: SIMD2(Int32(luma.width), Int32(luma.height)),
            chromaSize: SIMD2(Int32(chroma.width), Int32(chroma.height)),
            orientation: orientation.kernelCode,
            chromaTransform: SIMD4(Float(scaleX), Float(scaleY), Float(0.5 - sitingX * scaleX), Float(0.5 - sitingY * scaleY)),
            range: SIMD4(Float(range.lumaOffset), Float(range.chromaOffset), Float(range.lumaScale), Float(range.chromaScale)),
            toR: SIMD4(Float(rows[0][0]), Float(rows[0][1]), Float(rows[0][2]), Float(layout.sampleScale)),
            toG: SIMD4(Float(rows[1][0]), Float(rows[1][1]), Float(rows[1][2]), 0),
            toB: SIMD4(Float(rows[2][0]), Float(rows[2][1]), Float(rows[2][2]), 0))
        recorder.dispatch(try toWorkingKernel(layout.kind), [
            .sampledImage(luma, .nearest), .sampledImage(chroma, .linear),
            .sampledImage(planes.count > 2 ? planes[2] : placeholder, .linear), .storageImage(working),
        ], push: push, covering: working.width, working.height)
    }

    /// Records working image -> planes for the encoder. With `original` (the decoded planes
    /// and the working image as first converted) only the change is applied to them, so
    /// untouched pixels come out bit-identical.
    /// `region` (upright pixels) limits the work to the chroma sites it touches.
    func recordToPlanes(processed: GPUImage, original: (reference: GPUImage, planes: [GPUImage])?,
                        output: [GPUImage], layout: VideoPlaneLayout, color: ColorDescription,
                        orientation: Orientation, region: PixelRegion? = nil, on recorder: CommandRecorder) throws {
        let luma = output[0]
        let chromaSize = output.count > 1 ? (output[1].width, output[1].height) : (luma.width, luma.height)
        var sites = (x: 0, y: 0, width: chromaSize.0, height: chromaSize.1)
        if let region {
            let stored = orientation.storedRegion(of: region, storedWidth: luma.width, storedHeight: luma.height)
            let (shiftX, shiftY) = layout.kind == .rgba || layout.kind == .gray ? (0, 0) : layout.chromaShift
            // One site of margin: co-sited chroma filters read a neighbouring column.
            let x0 = max((stored.x >> shiftX) - 1, 0), y0 = max((stored.y >> shiftY) - 1, 0)
            let x1 = min(((stored.x + stored.width - 1) >> shiftX) + 2, chromaSize.0)
            let y1 = min(((stored.y + stored.height - 1) >> shiftY) + 2, chromaSize.1)
            guard x1 > x0, y1 > y0 else { return }
            sites = (x0, y0, x1 - x0, y1 - y0)
        }
        let range = color.range(bitDepth: layout.bitDepth)
        let rows = color.fromRGB
        let push = KernelLibrary.RgbToYuvPush(
            storedSize: SIMD2(Int32(luma.width), Int32(luma.height)), chromaSize: SIMD2(Int32(chromaSize.0), Int32(chromaSize.1)),
            orientation: orientation.kernelCode,
            range: SIMD4(Float(range.lumaOffset), Float(range.chromaOffset), Float(range.lumaScale), Float(range.chromaScale)),
            toY: SIMD4(Float(rows[0][0]), Float(rows[0][1]), Float(rows[0][2]), Float(layout.sampleScale)),
            toPb: SIMD4(Float(rows[1][0]), Float(rows[1][1]), Float(rows[1][2]), 0),
            toPr: SIMD4(Float(rows[2][0]), Float(rows[2][1]), Float(rows[2][2]), 0),
            siteOrigin: SIMD2(Int32(sites.x), Int32(sites.y)), siteCount: SIMD2(Int32(sites.width), Int32(sites.height)))
        let originalPlanes = original?.planes ?? []
        func plane(_ images: [GPUImage], _ index: Int) -> GPUImage { index < images.count ? images[index] : placeholder }
        recorder.dispatch(try toPlanesKernel(PlanesKey(layout: layout, color: color, delta: original != nil)), [
            .sampledImage(processed, .nearest), .sampledImage(original?.reference ?? processed, .nearest),
            .sampledImage(plane(originalPlanes, 0), .nearest), .sampledImage(plane(originalPlanes, 1), .nearest),
            .sampledImage(plane(originalPlanes, 2), .nearest),
            .storageImage(luma), .storageImage(plane(output, 1)), .storageImage(plane(output, 2)),
        ], push: push, covering: sites.width, sites.height)
    }
}
