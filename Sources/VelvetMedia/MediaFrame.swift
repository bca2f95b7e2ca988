import CFFmpeg
import VelvetGPU

/// An owned AVFrame. Handed from one pipeline thread to the next, never shared, hence
/// @unchecked Sendable.
final class MediaFrame: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<AVFrame>

    init() throws {
        guard let frame = av_frame_alloc() else { throw MediaError.unsupported("out of memory allocating a frame") }
        pointer = frame
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&frame)
    }

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

    var width: Int { Int(pointer.pointee.width) }
    var height: Int { Int(pointer.pointee.height) }
    var pixelFormat: AVPixelFormat { AVPixelFormat(rawValue: pointer.pointee.format) }
    var timestamp: Int64 { pointer.pointee.best_effort_timestamp }
}

/// An owned AVPacket (audio or other streams copied to the output untouched).
final class MediaPacket: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<AVPacket>

    init() throws {
        guard let packet = av_packet_alloc() else { throw MediaError.unsupported("out of memory allocating a packet") }
        pointer = packet
    }

    deinit {
        var packet: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&packet)
    }
}
