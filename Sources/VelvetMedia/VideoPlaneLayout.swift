import CFFmpeg
import VelvetGPU

/// How a decoded frame's pixel format sits in GPU images: which planes, their formats,
/// their subsampling and bit depth. Formats not listed go through swscale to RGBA first.
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

    static func == (lhs: VideoPlaneLayout, rhs: VideoPlaneLayout) -> Bool { lhs.pixelFormat == rhs.pixelFormat }

    /// The layout for a pixel format the GPU kernels read directly, or nil.
    init?(_ format: AVPixelFormat) {
        func planar(_ sample: PixelFormat, _ x: Int, _ y: Int) -> [Plane] {
            [Plane(format: sample, widthShift: 0, heightShift: 0), Plane(format: sample, widthShift: x, heightShift: y),
             Plane(format: sample, widthShift: x, heightShift: y)]
        }
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
        case AV_PIX_FMT_NV12:
            kind = .semiPlanar
            planes = [Plane(format: .r8, widthShift: 0, heightShift: 0), Plane(format: .rg8, widthShift: 1, heightShift: 1)]
        case AV_PIX_FMT_P010LE:
            kind = .semiPlanar
            planes = [Plane(format: .r16, widthShift: 0, heightShift: 0), Plane(format: .rg16, widthShift: 1, heightShift: 1)]
            bitDepth = 10
            shift = 6
        case AV_PIX_FMT_GRAY8: kind = .gray; planes = [Plane(format: .r8, widthShift: 0, heightShift: 0)]
        case AV_PIX_FMT_GRAY10LE: kind = .gray; planes = [Plane(format: .r16, widthShift: 0, heightShift: 0)]; bitDepth = 10
        case AV_PIX_FMT_RGBA: kind = .rgba; planes = [Plane(format: .rgba8, widthShift: 0, heightShift: 0)]
        default: return nil
        }
    }

    func planeSize(_ index: Int, width: Int, height: Int) -> (width: Int, height: Int) {
        let plane = planes[index]
        return ((width + (1 << plane.widthShift) - 1) >> plane.widthShift, (height + (1 << plane.heightShift) - 1) >> plane.heightShift)
    }
}
