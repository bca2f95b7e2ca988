import CFFmpeg
import VelvetGPU

/// How a decoded frame's pixel format sits in GPU images: which planes, their formats,
/// their subsampling and bit depth. Formats not listed are repacked by swscale into the
/// closest listed one first (`closestReadable`).
struct VideoPlaneLayout: Equatable {
    enum Kind: Int32 { case planar = 0, semiPlanar = 1, gray = 2, rgba = 3 }

    struct Plane: Equatable {
        var format: PixelFormat
        var widthShift: Int
        var heightShift: Int
        var bytesPerSample: Int { format.bytesPerPixel }
    }

    var kind: Kind
    var planes: [Plane]
    /// Bits per sample value, and how far values sit above bit 0 in their container (P010: 6).
    var bitDepth: Int
    var shift: Int
    /// Full range regardless of the stream's tag (the "J" formats).
    var forcesFullRange: Bool
    let pixelFormat: AVPixelFormat

    var chromaShift: (x: Int, y: Int) { planes.count > 1 ? (planes[1].widthShift, planes[1].heightShift) : (0, 0) }

    /// Normalised texel -> normalised code (code / (2^bitDepth - 1)).
    var sampleScale: Double {
        let container = planes[0].format == .r16 || planes[0].format == .rg16 ? 16 : 8
        return Double((1 << container) - 1) / (Double(1 << shift) * Double((1 << bitDepth) - 1))
    }

    /// Bytes of all planes per pixel of the frame (1.5 for yuv420p).
    var bytesPerPixel: Double {
        planes.reduce(0) { $0 + Double($1.bytesPerSample) / Double(1 << ($1.widthShift + $1.heightShift)) }
    }

    static func == (lhs: VideoPlaneLayout, rhs: VideoPlaneLayout) -> Bool { lhs.pixelFormat == rhs.pixelFormat }

    /// Every format the kernels read and write directly, in FFmpeg's order of preference.
    static let readableFormats: [AVPixelFormat] = [
        AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUV444P,
        AV_PIX_FMT_YUVJ444P, AV_PIX_FMT_YUV420P10LE, AV_PIX_FMT_YUV422P10LE, AV_PIX_FMT_YUV444P10LE,
        AV_PIX_FMT_YUV420P12LE, AV_PIX_FMT_YUV422P12LE, AV_PIX_FMT_YUV444P12LE, AV_PIX_FMT_YUV420P16LE,
        AV_PIX_FMT_YUV422P16LE, AV_PIX_FMT_YUV444P16LE, AV_PIX_FMT_NV12, AV_PIX_FMT_P010LE, AV_PIX_FMT_P016LE,
        AV_PIX_FMT_GRAY8, AV_PIX_FMT_GRAY10LE, AV_PIX_FMT_GRAY12LE, AV_PIX_FMT_GRAY16LE, AV_PIX_FMT_RGBA, AV_PIX_FMT_RGBA64LE,
    ]

    /// The layout for a pixel format the GPU kernels read directly, or nil.
    init?(_ format: AVPixelFormat) {
        func planar(_ sample: PixelFormat, _ x: Int, _ y: Int) -> [Plane] {
            [Plane(format: sample, widthShift: 0, heightShift: 0), Plane(format: sample, widthShift: x, heightShift: y),
             Plane(format: sample, widthShift: x, heightShift: y)]
        }
        func semiPlanar(_ luma: PixelFormat, _ chroma: PixelFormat) -> [Plane] {
            [Plane(format: luma, widthShift: 0, heightShift: 0), Plane(format: chroma, widthShift: 1, heightShift: 1)]
        }
        let single = { (sample: PixelFormat) in [Plane(format: sample, widthShift: 0, heightShift: 0)] }
        pixelFormat = format
        forcesFullRange = false
        shift = 0
        bitDepth = 8
        switch format {
        case AV_PIX_FMT_YUV420P: kind = .planar; planes = planar(.r8, 1, 1)
        case AV_PIX_FMT_YUVJ420P: kind = .planar; planes = planar(.r8, 1, 1); forcesFullRange = true
        case AV_PIX_FMT_YUV422P: kind = .planar; planes = planar(.r8, 1, 0)
        case AV_PIX_FMT_YUVJ422P: kind = .planar; planes = planar(.r8, 1, 0); forcesFullRange = true
        case AV_PIX_FMT_YUV444P: kind = .planar; planes = planar(.r8, 0, 0)
        case AV_PIX_FMT_YUVJ444P: kind = .planar; planes = planar(.r8, 0, 0); forcesFullRange = true
        case AV_PIX_FMT_YUV420P10LE: kind = .planar; planes = planar(.r16, 1, 1); bitDepth = 10
        case AV_PIX_FMT_YUV422P10LE: kind = .planar; planes = planar(.r16, 1, 0); bitDepth = 10
        case AV_PIX_FMT_YUV444P10LE: kind = .planar; planes = planar(.r16, 0, 0); bitDepth = 10
        case AV_PIX_FMT_YUV420P12LE: kind = .planar; planes = planar(.r16, 1, 1); bitDepth = 12
        case AV_PIX_FMT_YUV422P12LE: kind = .planar; planes = planar(.r16, 1, 0); bitDepth = 12
        case AV_PIX_FMT_YUV444P12LE: kind = .planar; planes = planar(.r16, 0, 0); bitDepth = 12
        case AV_PIX_FMT_YUV420P16LE: kind = .planar; planes = planar(.r16, 1, 1); bitDepth = 16
        case AV_PIX_FMT_YUV422P16LE: kind = .planar; planes = planar(.r16, 1, 0); bitDepth = 16
        case AV_PIX_FMT_YUV444P16LE: kind = .planar; planes = planar(.r16, 0, 0); bitDepth = 16
        case AV_PIX_FMT_NV12: kind = .semiPlanar; planes = semiPlanar(.r8, .rg8)
        case AV_PIX_FMT_P010LE: kind = .semiPlanar; planes = semiPlanar(.r16, .rg16); bitDepth = 10; shift = 6
        case AV_PIX_FMT_P016LE: kind = .semiPlanar; planes = semiPlanar(.r16, .rg16); bitDepth = 16
        case AV_PIX_FMT_GRAY8: kind = .gray; planes = single(.r8)
        case AV_PIX_FMT_GRAY10LE: kind = .gray; planes = single(.r16); bitDepth = 10
        case AV_PIX_FMT_GRAY12LE: kind = .gray; planes = single(.r16); bitDepth = 12
        case AV_PIX_FMT_GRAY16LE: kind = .gray; planes = single(.r16); bitDepth = 16
        case AV_PIX_FMT_RGBA: kind = .rgba; planes = single(.rgba8)
        case AV_PIX_FMT_RGBA64LE: kind = .rgba; planes = single(.rgba16); bitDepth = 16
        default: return nil
        }
    }

    /// The readable layout that `format` converts to with the least loss (FFmpeg's own
    /// ranking: depth, chroma resolution, RGB vs YUV): rgb48be -> rgba64le, yuyv422 ->
    /// yuv422p, yuv420p9le -> yuv420p10le. Alpha is kept only for RGB and grey formats:
    /// a YUV source with alpha keeps its depth and loses the alpha (video outputs hold none).
    static func closestReadable(to format: AVPixelFormat) -> VideoPlaneLayout {
        if let layout = VideoPlaneLayout(format) { return layout }
        let keepsAlpha: Int32 = hasAlpha(format) && !dropsAlpha(format) ? 1 : 0
        let list = readableFormats + [AV_PIX_FMT_NONE]
        let best = list.withUnsafeBufferPointer { avcodec_find_best_pix_fmt_of_list($0.baseAddress, format, keepsAlpha, nil) }
        return VideoPlaneLayout(best) ?? VideoPlaneLayout(AV_PIX_FMT_RGBA64LE)!
    }

    static func hasAlpha(_ format: AVPixelFormat) -> Bool {
        (av_pix_fmt_desc_get(format)?.pointee.flags ?? 0) & UInt64(AV_PIX_FMT_FLAG_ALPHA) != 0
    }

    /// Whether `format` is YUV with alpha, whose alpha no layout holds (it is read as YUV alone).
    static func dropsAlpha(_ format: AVPixelFormat) -> Bool {
        guard hasAlpha(format), let descriptor = av_pix_fmt_desc_get(format)?.pointee else { return false }
        return descriptor.flags & UInt64(AV_PIX_FMT_FLAG_RGB) == 0 && descriptor.nb_components >= 3
    }

    /// Whether swscale moves `source` into `target` without changing a sample: both YUV of the
    /// same chroma subsampling and depth, only their planes packed otherwise (yuv420p <-> nv12,
    /// yuv422p <-> nv16, yuv420p10le <-> p010le).
    static func repacksExactly(_ source: AVPixelFormat, to target: AVPixelFormat) -> Bool {
        guard let a = av_pix_fmt_desc_get(source)?.pointee, let b = av_pix_fmt_desc_get(target)?.pointee else { return false }
        let notYUV = UInt64(AV_PIX_FMT_FLAG_RGB) | UInt64(AV_PIX_FMT_FLAG_PAL) | UInt64(AV_PIX_FMT_FLAG_BITSTREAM) | UInt64(AV_PIX_FMT_FLAG_ALPHA)
        return a.flags & notYUV == 0 && b.flags & notYUV == 0 && a.nb_components == 3 && b.nb_components == 3
            && a.log2_chroma_w == b.log2_chroma_w && a.log2_chroma_h == b.log2_chroma_h
            && [a.comp.0.depth, a.comp.1.depth, a.comp.2.depth] == [b.comp.0.depth, b.comp.1.depth, b.comp.2.depth]
    }

    func planeSize(_ index: Int, width: Int, height: Int) -> (width: Int, height: Int) {
        let plane = planes[index]
        return ((width + (1 << plane.widthShift) - 1) >> plane.widthShift, (height + (1 << plane.heightShift) - 1) >> plane.heightShift)
    }
}
