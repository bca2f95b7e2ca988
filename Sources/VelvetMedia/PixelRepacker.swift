import CFFmpeg

/// swscale, only to move pixels between formats: a decoded format the kernels do not read
/// into the closest one they do (`VideoPlaneLayout.closestReadable`), and the GPU's output
/// into the encoder's format (rgba -> rgb24, rgba64le -> rgb48be). Byte order, packing and
/// bit depth change, chroma of 4:1:1/4:4:0 is repeated (point sampling); the stream's own
/// matrix and range are set on both sides, so the colour is converted by `ColorConverter`,
/// except for the rare formats swscale must convert itself (Bayer and XYZ input; grey, 1-bit
/// or 4:1:1 output asked for by name; docs/ARCHITECTURE.md lists them).
final class PixelRepacker: @unchecked Sendable {
    private var context: OpaquePointer?
    private var key: (source: AVPixelFormat, target: AVPixelFormat, width: Int32, height: Int32)?

    deinit { sws_freeContext(context) }

    /// `frame` in `target`, its timestamps, colour tags, field order and metadata kept.
    func repack(_ frame: MediaFrame, to target: AVPixelFormat) throws -> MediaFrame {
        let source = frame.pixelFormat, width = frame.pointer.pointee.width, height = frame.pointer.pointee.height
        if context == nil || key.map({ $0 != (source, target, width, height) }) ?? true {
            sws_freeContext(context)
            context = sws_getContext(width, height, source, width, height, target,
                                     SWS_POINT | SWS_ACCURATE_RND | SWS_BITEXACT, nil, nil, nil)
            key = (source, target, width, height)
            guard let context else { throw MediaError.unsupported("no conversion from \(Self.name(source)) to \(Self.name(target))") }
            let fullRange: Int32 = frame.pointer.pointee.color_range == AVCOL_RANGE_JPEG
                || VideoPlaneLayout(source)?.forcesFullRange == true ? 1 : 0
            let matrix = sws_getCoefficients(Int32(frame.pointer.pointee.colorspace.rawValue))
            sws_setColorspaceDetails(context, matrix, fullRange, matrix, fullRange, 0, 1 << 16, 1 << 16)
        }
        let converted = try MediaFrame()
        converted.pointer.pointee.format = target.rawValue
        converted.pointer.pointee.width = width
        converted.pointer.pointee.height = height
        let result = sws_scale_frame(context, converted.pointer, frame.pointer)
        guard result >= 0 else { throw MediaError.unsupported("converting \(Self.name(source)): \(ffmpegMessage(result))") }
        av_frame_copy_props(converted.pointer, frame.pointer)
        return converted
    }

    /// `frame` itself when the kernels read its format, else repacked into the closest one they do.
    func readable(_ frame: MediaFrame) throws -> MediaFrame {
        if VideoPlaneLayout(frame.pixelFormat) != nil { return frame }
        return try repack(frame, to: VideoPlaneLayout.closestReadable(to: frame.pixelFormat).pixelFormat)
    }

    static func name(_ format: AVPixelFormat) -> String { MediaFrame.name(of: format) }
}
