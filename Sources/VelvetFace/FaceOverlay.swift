import VelvetGPU
import VelvetKernels

/// Draws what the tracker found, for people to inspect it: the person mask tinted over
/// the frame, then each face's box, mesh regions (outlines) and 468 mesh points.
public final class FaceOverlay: @unchecked Sendable {
    public let context: GPUContext
    private let tint: TypedKernel<KernelLibrary.FaceOverlayTintPush>
    private let segments: TypedKernel<KernelLibrary.FaceDrawSegmentsPush>
    private let maskToRGB: TypedKernel<KernelLibrary.FaceMaskToRgbPush>

    public init(context: GPUContext) throws {
        self.context = context
        tint = try TypedKernel(context: context)
        segments = try TypedKernel(context: context)
        maskToRGB = try TypedKernel(context: context)
    }

    /// Records the overlay of `input` into `output` (same size). `mask`: any size, or nil.
    public func record(on recorder: CommandRecorder, input: GPUImage, output: GPUImage, faces: [Face],
                       mask: GPUImage?) throws {
        guard input.width == output.width, input.height == output.height else {
            throw FaceError.invalidArgument("overlay input and output differ in size")
        }
        let push = KernelLibrary.FaceOverlayTintPush(tint: SIMD4(0.15, 0.45, 1.0, mask == nil ? 0 : 0.45),
                                                     size: SIMD2(Int32(output.width), Int32(output.height)))
        recorder.dispatch(tint, [.sampledImage(input, .nearest), .sampledImage(mask ?? input, .linear), .storageImage(output)],
                          push: push, covering: output.width, output.height)
        let lines = Self.segments(for: faces, frameWidth: output.width)
        guard !lines.isEmpty else { return }
        let buffer = try GPUBuffer.pooled(context: context, size: lines.count * MemoryLayout<Float>.size)
        try lines.withUnsafeBytes { try recorder.upload($0, to: buffer) }
        let drawPush = KernelLibrary.FaceDrawSegmentsPush(size: SIMD2(Int32(output.width), Int32(output.height)),
                                                          count: Int32(lines.count / 8))
        recorder.dispatch(segments, [.buffer(buffer), .storageImage(output)], push: drawPush,
                          groups: ((lines.count / 8 + 63) / 64, 1, 1))
    }

    /// Records `mask` (any size) as an opaque grey image into `output`.
    public func recordMask(on recorder: CommandRecorder, mask: GPUImage, output: GPUImage) {
        let push = KernelLibrary.FaceMaskToRgbPush(size: SIMD2(Int32(output.width), Int32(output.height)))
        recorder.dispatch(maskToRGB, [.sampledImage(mask, .linear), .storageImage(output)], push: push,
                          covering: output.width, output.height)
    }

    /// 8 floats per segment: x0 y0 x1 y1 r g b radius.
    static func segments(for faces: [Face], frameWidth: Int) -> [Float] {
        let dot: Float = frameWidth >= 1280 ? 1 : 0
        var result: [Float] = []
        func add(_ a: SIMD2<Float>, _ b: SIMD2<Float>, _ colour: SIMD3<Float>, _ radius: Float) {
            result += [a.x, a.y, b.x, b.y, colour.x, colour.y, colour.z, radius]
        }
        for face in faces {
            let points = face.points
            let box = face.box
            let corners = [SIMD2(box.x, box.y), SIMD2(box.x + box.width, box.y),
                           SIMD2(box.x + box.width, box.y + box.height), SIMD2(box.x, box.y + box.height)]
            for i in 0..<4 { add(corners[i], corners[(i + 1) % 4], SIMD3(0.2, 0.5, 1), dot) }
            for region in MeshRegion.allCases {
                let loop = region.indices
                for i in loop.indices { add(points[loop[i]], points[loop[(i + 1) % loop.count]], SIMD3(1, 0.85, 0.1), 0) }
            }
            for point in points { add(point, point, SIMD3(0.1, 1, 0.3), dot) }
        }
        return result
    }
}
