import CFFmpeg

/// An owned AVFrame. Handed from one pipeline thread to the next, never shared, hence
/// @unchecked Sendable.
final class MediaFrame: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<AVFrame>
    /// Its planes copied into upload staging by the decode thread (`FrameStaging.Planes`), until
    /// the upload takes them. Untyped so that this file stays free of the GPU module (the media
    /// fuzz target builds it without one).
    var stagedUpload: AnyObject?

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
    /// FFmpeg's name of a pixel format (`yuv420p10le`), for messages.
    static func name(of format: AVPixelFormat) -> String { av_get_pix_fmt_name(format).map { String(cString: $0) } ?? "unknown" }
    var timestamp: Int64 { pointer.pointee.best_effort_timestamp }
    /// The bytes of its pixels, packed (what holding the frame costs, about).
    var byteCount: Int { max(0, Int(av_image_get_buffer_size(pixelFormat, pointer.pointee.width, pointer.pointee.height, 1))) }

    /// The field order the output keeps: this frame's own, as ffmpeg takes it (the stream's
    /// can say top first of bottom-first frames), in the stream's words where they agree
    /// (TB is top first too); the stream's for a frame that says nothing.
    func fieldOrder(stream: UnsafePointer<AVStream>) -> AVFieldOrder {
        let declared = stream.pointee.codecpar.pointee.field_order
        guard pointer.pointee.interlaced_frame != 0 else { return declared != AV_FIELD_UNKNOWN ? declared : AV_FIELD_PROGRESSIVE }
        let topFirst = pointer.pointee.top_field_first != 0
        let agrees = topFirst ? [AV_FIELD_TT, AV_FIELD_TB].contains(declared) : [AV_FIELD_BB, AV_FIELD_BT].contains(declared)
        return agrees ? declared : topFirst ? AV_FIELD_TT : AV_FIELD_BB
    }

    /// The ICC profile the decoder found (JPEG APP2, PNG iCCP, WebP ICCP), as bytes.
    var iccProfile: [UInt8]? {
        guard let data = av_frame_get_side_data(pointer, AV_FRAME_DATA_ICC_PROFILE), data.pointee.size > 0 else { return nil }
        return Array(UnsafeBufferPointer(start: data.pointee.data, count: Int(data.pointee.size)))
    }

    /// Attaches an ICC profile (what PNG, JPEG and WebP encoders write), unless one is there.
    func attach(iccProfile profile: [UInt8]) {
        guard av_frame_get_side_data(pointer, AV_FRAME_DATA_ICC_PROFILE) == nil,
              let data = av_frame_new_side_data(pointer, AV_FRAME_DATA_ICC_PROFILE, profile.count) else { return }
        profile.withUnsafeBufferPointer { data.pointee.data.update(from: $0.baseAddress!, count: profile.count) }
    }

    /// Takes `source`'s timestamp and interlacing, for a frame made from it.
    func copyTiming(from source: MediaFrame) {
        pointer.pointee.pts = source.timestamp
        pointer.pointee.interlaced_frame = source.pointer.pointee.interlaced_frame
        pointer.pointee.top_field_first = source.pointer.pointee.top_field_first
    }
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
