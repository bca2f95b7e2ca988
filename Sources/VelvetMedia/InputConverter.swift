import CFFmpeg

/// swscale, only for decoded formats the GPU kernels do not read (rgb24, bgr0, pal8, ...):
/// they become RGBA, exactly for 8-bit RGB sources.
final class InputConverter: @unchecked Sendable {
    private var context: OpaquePointer?
    private var source: (format: AVPixelFormat, width: Int32, height: Int32)?

    deinit { sws_freeContext(context) }

    func toRGBA(_ frame: MediaFrame) throws -> MediaFrame {
        let key = (frame.pixelFormat, frame.pointer.pointee.width, frame.pointer.pointee.height)
        if context == nil || source.map({ $0 != key }) ?? true {
            sws_freeContext(context)
            context = sws_getContext(key.1, key.2, key.0, key.1, key.2, AV_PIX_FMT_RGBA,
                                     SWS_POINT | SWS_ACCURATE_RND | SWS_BITEXACT, nil, nil, nil)
            source = key
        }
        guard let context else {
            throw MediaError.unsupported("pixel format \(String(cString: av_get_pix_fmt_name(frame.pixelFormat)))")
        }
        let converted = try MediaFrame()
        converted.pointer.pointee.format = AV_PIX_FMT_RGBA.rawValue
        converted.pointer.pointee.width = key.1
        converted.pointer.pointee.height = key.2
        let result = sws_scale_frame(context, converted.pointer, frame.pointer)
        guard result >= 0 else { throw MediaError.decode(path: "", reason: ffmpegMessage(result)) }
        converted.pointer.pointee.pts = frame.pointer.pointee.pts
        converted.pointer.pointee.best_effort_timestamp = frame.pointer.pointee.best_effort_timestamp
        av_dict_copy(&converted.pointer.pointee.metadata, frame.pointer.pointee.metadata, 0)
        return converted
    }
}
