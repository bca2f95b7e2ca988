import CFFmpeg
import VelvetGPU

extension MediaFrame {
    /// A frame in `format` holding the downloaded planes (rows copied to FFmpeg's padded layout).
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
}
