import CFFmpeg

/// Grey with alpha (`ya8`, `ya16be`, `ya16le`) to and from the GPU's RGBA of its depth
/// (`rgba`, `rgba64le`), sample by sample: FFmpeg 5.1's swscale moved the alpha of RGBA to
/// `ya8` one pixel right, and took 16-bit grey through its RGB path, which moved codes above
/// 20000 by up to 6 (untouched grey pictures came back changed). Grey in is copied into R, G
/// and B; back, a grey pixel (R = G = B) keeps its code and a coloured one (makeup on the face)
/// takes the luma of the frame's matrix. Full range only, as grey pictures are; a frame tagged
/// limited is left to swscale.
enum GreyAlphaSamples {
    /// Each grey-with-alpha format, its RGBA counterpart, bytes a sample and byte order.
    private static let pairs: [(grey: AVPixelFormat, rgba: AVPixelFormat, bytes: Int, bigEndian: Bool)] = [
        (AV_PIX_FMT_YA8, AV_PIX_FMT_RGBA, 1, false), (AV_PIX_FMT_YA16BE, AV_PIX_FMT_RGBA64LE, 2, true),
        (AV_PIX_FMT_YA16LE, AV_PIX_FMT_RGBA64LE, 2, false),
    ]

    /// `frame` in `target`, or nil when this is not such a pair (swscale's to do).
    static func copy(_ frame: MediaFrame, to target: AVPixelFormat) throws -> MediaFrame? {
        let source = frame.pixelFormat
        guard frame.pointer.pointee.color_range != AVCOL_RANGE_MPEG,
              let pair = pairs.first(where: { ($0.grey, $0.rgba) == (source, target) || ($0.rgba, $0.grey) == (source, target) })
        else { return nil }
        let fromGrey = source == pair.grey
        let converted = try MediaFrame()
        converted.pointer.pointee.format = target.rawValue
        converted.pointer.pointee.width = frame.pointer.pointee.width
        converted.pointer.pointee.height = frame.pointer.pointee.height
        let allocated = av_frame_get_buffer(converted.pointer, 0)
        guard allocated >= 0 else { throw MediaError.unsupported("converting \(MediaFrame.name(of: source)): \(ffmpegMessage(allocated))") }
        let samples = Samples(bytes: pair.bytes, bigEndian: pair.bigEndian)
        let luma = ColorDescription(frame: frame.pointer, layout: nil).coefficients
        let width = Int(frame.pointer.pointee.width)
        for row in 0..<Int(frame.pointer.pointee.height) {
            let input = UnsafeRawPointer(frame.pointer.pointee.data.0!) + row * Int(frame.pointer.pointee.linesize.0)
            let output = UnsafeMutableRawPointer(converted.pointer.pointee.data.0!) + row * Int(converted.pointer.pointee.linesize.0)
            for x in 0..<width {
                if fromGrey {
                    let grey = samples.load(input, x * 2, grey: true), alpha = samples.load(input, x * 2 + 1, grey: true)
                    samples.store(grey, output, x * 4, grey: false)
                    samples.store(grey, output, x * 4 + 1, grey: false)
                    samples.store(grey, output, x * 4 + 2, grey: false)
                    samples.store(alpha, output, x * 4 + 3, grey: false)
                } else {
                    let r = samples.load(input, x * 4, grey: false), g = samples.load(input, x * 4 + 1, grey: false)
                    let b = samples.load(input, x * 4 + 2, grey: false)
                    let grey = r == g && g == b ? r
                        : Int((luma.kr * Double(r) + (1 - luma.kr - luma.kb) * Double(g) + luma.kb * Double(b)).rounded())
                    samples.store(grey, output, x * 2, grey: true)
                    samples.store(samples.load(input, x * 4 + 3, grey: false), output, x * 2 + 1, grey: true)
                }
            }
        }
        av_frame_copy_props(converted.pointer, frame.pointer)
        return converted
    }

    /// Samples of one width: the grey side in its own byte order, the RGBA side little-endian.
    private struct Samples {
        let bytes: Int
        let bigEndian: Bool

        func load(_ base: UnsafeRawPointer, _ index: Int, grey: Bool) -> Int {
            guard bytes == 2 else { return Int(base.load(fromByteOffset: index, as: UInt8.self)) }
            let value = base.loadUnaligned(fromByteOffset: index * 2, as: UInt16.self)
            return Int(grey && bigEndian ? UInt16(bigEndian: value) : UInt16(littleEndian: value))
        }

        func store(_ value: Int, _ base: UnsafeMutableRawPointer, _ index: Int, grey: Bool) {
            guard bytes == 2 else { return base.storeBytes(of: UInt8(value), toByteOffset: index, as: UInt8.self) }
            let sample = UInt16(value)
            base.storeBytes(of: grey && bigEndian ? sample.bigEndian : sample.littleEndian, toByteOffset: index * 2, as: UInt16.self)
        }
    }
}
