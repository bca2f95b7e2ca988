import CFFmpeg
import VelvetGPU

extension MediaFrame {
    /// A frame in `format` holding the downloaded planes (rows copied to FFmpeg's padded
    /// layout, in freshly allocated buffers).
    convenience init(copying readbacks: [GPUReadback], planes: [GPUImage], format: AVPixelFormat) throws {
        try self.init()
        pointer.pointee.format = format.rawValue
        pointer.pointee.width = Int32(planes[0].width)
        pointer.pointee.height = Int32(planes[0].height)
        let allocated = av_frame_get_buffer(pointer, 0)
        guard allocated >= 0 else { throw MediaError.encode(ffmpegMessage(allocated)) }
        for (index, readback) in readbacks.enumerated() {
            let image = planes[index]
            let rowBytes = image.width * image.format.bytesPerPixel
            let pitch = Int(velvet_frame_linesize(pointer, Int32(index)))
            guard let destination = velvet_frame_data(pointer, Int32(index)), let source = readback.raw.baseAddress else { continue }
            for row in 0..<image.height {
                (destination + row * pitch).update(from: source.advanced(by: row * rowBytes).assumingMemoryBound(to: UInt8.self),
                                                   count: rowBytes)
            }
        }
    }

    /// The bytes between rows of a plane the frame wraps (`init(wrapping:)`): FFmpeg's own
    /// alignment (64 bytes, as `av_frame_get_buffer` gives), so encoders' SIMD reads are aligned.
    static func linesize(for plane: GPUImage) -> Int { (plane.width * plane.format.bytesPerPixel + 63) / 64 * 64 }

    /// Bytes past a wrapped plane's last row that FFmpeg may read (`AV_INPUT_BUFFER_PADDING_SIZE`).
    static let planePadding = Int(AV_INPUT_BUFFER_PADDING_SIZE)

    /// A frame in `format` whose planes are the downloads themselves (no copy): each downloaded
    /// with rows `linesize(for:)` apart and `planePadding` bytes more, and kept until FFmpeg
    /// releases the frame (the staging buffers then go back to their pool). Read-only: a
    /// consumer that must write makes its own copy.
    convenience init(wrapping readbacks: [GPUReadback], planes: [GPUImage], format: AVPixelFormat) throws {
        try self.init()
        pointer.pointee.format = format.rawValue
        pointer.pointee.width = Int32(planes[0].width)
        pointer.pointee.height = Int32(planes[0].height)
        for (index, (readback, plane)) in zip(readbacks, planes).enumerated() {
            let raw = readback.raw
            let linesize = Self.linesize(for: plane)
            precondition(raw.count >= linesize * plane.height + Self.planePadding, "plane \(index) was not downloaded for wrapping")
            guard let data = raw.baseAddress else { throw MediaError.unsupported("an empty download") }
            let owner = Unmanaged.passRetained(readback).toOpaque()
            guard let buffer = av_buffer_create(UnsafeMutablePointer(mutating: data.assumingMemoryBound(to: UInt8.self)), raw.count,
                                                releaseReadback, owner, Int32(AV_BUFFER_FLAG_READONLY)) else {
                Unmanaged<GPUReadback>.fromOpaque(owner).release()
                throw MediaError.unsupported("out of memory for a frame buffer")
            }
            velvet_frame_set_plane(pointer, Int32(index), buffer, Int32(linesize))
        }
    }
}

/// FFmpeg's free callback for a wrapped download: lets go of the readback (its staging buffer).
private func releaseReadback(_ owner: UnsafeMutableRawPointer?, _ data: UnsafeMutablePointer<UInt8>?) {
    guard let owner else { return }
    Unmanaged<GPUReadback>.fromOpaque(owner).release()
}
