import CFFmpeg

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
