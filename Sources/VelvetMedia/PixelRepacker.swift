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
    private var key: (source: AVPixelFormat, target: AVPixelFormat, width: Int32, height: Int32, range: AVColorRange, matrix: AVColorSpace)?

    deinit { sws_freeContext(context) }

    /// `frame` in `target`, its timestamps, colour tags, field order and metadata kept.
    func repack(_ frame: MediaFrame, to target: AVPixelFormat) throws -> MediaFrame {
        let source = frame.pixelFormat, width = frame.pointer.pointee.width, height = frame.pointer.pointee.height
        if let copied = try GreyAlphaSamples.copy(frame, to: target) { return copied }
        let range = frame.pointer.pointee.color_range, matrix = frame.pointer.pointee.colorspace
        if context == nil || key.map({ $0 != (source, target, width, height, range, matrix) }) ?? true {
            sws_freeContext(context)
            context = sws_getContext(width, height, source, width, height, target, Self.flags(source: source), nil, nil, nil)
            key = (source, target, width, height, range, matrix)
            guard let context else { throw MediaError.unsupported("no conversion from \(Self.name(source)) to \(Self.name(target))") }
            // The tag's range on both sides (a "J" source's is full), and a grey side is full
            // unless the range is tagged (RGB sides ignore it).
            let byTag = range == AVCOL_RANGE_JPEG || VideoPlaneLayout(source)?.forcesFullRange == true
            let unstated = range == AVCOL_RANGE_UNSPECIFIED
            let sourceFull: Int32 = byTag || unstated && ColorDescription.isGrey(source) ? 1 : 0
            let targetFull: Int32 = byTag || unstated && ColorDescription.isGrey(target) ? 1 : 0
            let coefficients = sws_getCoefficients(Int32(matrix.rawValue))
            sws_setColorspaceDetails(context, coefficients, sourceFull, coefficients, targetFull, 0, 1 << 16, 1 << 16)
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

    /// Point sampling, exact rounding, and swscale's bit-exact C paths, except from RGB of
    /// fewer than 8 bits a component (RGB555, RGB565, RGB444): there the bit-exact path widens
    /// by a shift (white 31 -> 248) where ffmpeg's converter repeats the high bits (31 -> 255).
    static func flags(source: AVPixelFormat) -> Int32 {
        let exact = SWS_POINT | SWS_ACCURATE_RND
        guard let descriptor = av_pix_fmt_desc_get(source)?.pointee,
              descriptor.flags & UInt64(AV_PIX_FMT_FLAG_RGB) != 0, descriptor.flags & UInt64(AV_PIX_FMT_FLAG_BITSTREAM) == 0,
              [descriptor.comp.0, descriptor.comp.1, descriptor.comp.2].contains(where: { $0.depth < 8 }) else {
            return exact | SWS_BITEXACT
        }
        return exact
    }

    /// `frame` itself when the kernels read its format, else repacked into the closest one they do.
    func readable(_ frame: MediaFrame) throws -> MediaFrame {
        if VideoPlaneLayout(frame.pixelFormat) != nil { return frame }
        return try repack(frame, to: VideoPlaneLayout.closestReadable(to: frame.pixelFormat).pixelFormat)
    }

    static func name(_ format: AVPixelFormat) -> String { MediaFrame.name(of: format) }
}
