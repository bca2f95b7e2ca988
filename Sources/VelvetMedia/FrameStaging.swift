import CFFmpeg
import VelvetGPU

/// A decoded frame's planes copied into upload staging on the decode thread, which waits on
/// the GPU thread most of a render, so the GPU thread (the bottleneck at 720p: the copy was
/// 0.18 of its 1.0 ms a frame on an H100) only records the GPU's copies
/// (`ColorConverter.recordUpload`). A frame of a layout this does not know keeps its planes
/// unstaged, and the GPU thread copies them as before.
enum FrameStaging {
    /// A frame's planes in staging, in plane order.
    final class Planes {
        let planes: [StagedBytes]
        init(_ planes: [StagedBytes]) { self.planes = planes }
    }

    /// Stages `frame`'s planes (`MediaFrame.stagedUpload`), each as a reader of its rows needs
    /// it: the line size times the rows but the last, then the last row's own bytes.
    static func stage(_ frame: MediaFrame, context: GPUContext) throws {
        guard let planes = planeBytes(of: frame) else { return }
        frame.stagedUpload = Planes(try Trace.span("stage") { try planes.map { try StagedBytes(context: context, copying: $0) } })
    }

    /// The staged planes of `frame`, taken off it (nil when it has none).
    static func take(from frame: MediaFrame) -> [StagedBytes]? {
        defer { frame.stagedUpload = nil }
        return (frame.stagedUpload as? Planes)?.planes
    }

    /// Each plane's bytes, or nil where the layout is not a plain one (a palette, a hardware
    /// frame, rows stored bottom up).
    static func planeBytes(of frame: MediaFrame) -> [UnsafeRawBufferPointer]? {
        let format = frame.pixelFormat
        guard let descriptor = av_pix_fmt_desc_get(format)?.pointee,
              descriptor.flags & UInt64(AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_HWACCEL) == 0 else { return nil }
        let count = Int(av_pix_fmt_count_planes(format))
        guard count > 0 else { return nil }
        var planes: [UnsafeRawBufferPointer] = []
        for plane in 0..<count {
            let pitch = Int(velvet_frame_linesize(frame.pointer, Int32(plane)))
            let rowBytes = Int(av_image_get_linesize(format, frame.pointer.pointee.width, Int32(plane)))
            // The chroma planes (1 and 2) have the subsampled height; luma and alpha the frame's.
            let shift = plane == 1 || plane == 2 ? Int(descriptor.log2_chroma_h) : 0
            let rows = (frame.height + (1 << shift) - 1) >> shift
            guard pitch > 0, rowBytes > 0, rowBytes <= pitch, rows > 0,
                  let data = velvet_frame_data(frame.pointer, Int32(plane)) else { return nil }
            planes.append(UnsafeRawBufferPointer(start: data, count: pitch * (rows - 1) + rowBytes))
        }
        return planes
    }
}
