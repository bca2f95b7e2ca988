import CFFmpeg

/// A stream's colour description: matrix, range, primaries, transfer and chroma siting,
/// with FFmpeg's defaults filled in where the stream leaves them unspecified.
public struct ColorDescription: Sendable, Equatable {
    public typealias Matrix = ColorMatrix

    public var matrix: Matrix
    public var fullRange: Bool
    /// Raw FFmpeg values, copied to the output so players show the same colours.
    public var primaries: Int32
    public var transfer: Int32
    public var colorSpace: Int32
    public var chromaLocation: Int32
    /// Whether the range is stated (by the stream, or by a full-range format): an unstated
    /// limited range stays unstated in the output, as ffmpeg keeps it (Matroska wrote `tv`).
    public var statesRange = true
    /// Whether the chroma siting is stated: an unstated one (read as left) stays unstated in the
    /// output, as ffmpeg keeps it (it was written as `left`, for 4:4:4, grey and RGB too).
    public var statesChromaLocation = true

    public init(matrix: Matrix, fullRange: Bool, primaries: Int32, transfer: Int32, colorSpace: Int32, chromaLocation: Int32) {
        (self.matrix, self.fullRange, self.primaries, self.transfer) = (matrix, fullRange, primaries, transfer)
        (self.colorSpace, self.chromaLocation) = (colorSpace, chromaLocation)
    }

    /// What an RGB source (PNG, gbrp video) becomes in a YUV video: its own primaries and
    /// transfer (BT.709 and sRGB when it names none), the BT.2020 matrix for BT.2020
    /// primaries and BT.709 otherwise, limited range.
    /// `statesMatrix` false (y4m, which has no tag for it): BT.601, what its readers assume.
    static func video(fromRGB source: ColorDescription? = nil, statesMatrix: Bool = true) -> ColorDescription {
        let (primaries, transfer) = source?.primariesAndTransfer ?? Self.srgb
        let wide = primaries == Int32(AVCOL_PRI_BT2020.rawValue)
        let (matrix, space): (Matrix, AVColorSpace) = !statesMatrix ? (.bt601, AVCOL_SPC_SMPTE170M)
            : wide ? (.bt2020, AVCOL_SPC_BT2020_NCL) : (.bt709, AVCOL_SPC_BT709)
        return ColorDescription(matrix: matrix, fullRange: false, primaries: primaries, transfer: transfer,
                                colorSpace: Int32(space.rawValue), chromaLocation: Int32(AVCHROMA_LOC_LEFT.rawValue))
    }

    /// What an RGB source becomes in a JPEG: BT.601, full range, centred chroma (JFIF), its
    /// own primaries and transfer.
    static func jpeg(fromRGB source: ColorDescription? = nil) -> ColorDescription {
        let (primaries, transfer) = source?.primariesAndTransfer ?? Self.srgb
        return ColorDescription(matrix: .bt601, fullRange: true, primaries: primaries, transfer: transfer,
                                colorSpace: Int32(AVCOL_SPC_BT470BG.rawValue), chromaLocation: Int32(AVCHROMA_LOC_CENTER.rawValue))
    }

    private static let srgb = (Int32(AVCOL_PRI_BT709.rawValue), Int32(AVCOL_TRC_IEC61966_2_1.rawValue))

    /// The source's primaries and transfer, each replaced by sRGB's when unspecified.
    private var primariesAndTransfer: (Int32, Int32) {
        (primaries == Int32(AVCOL_PRI_UNSPECIFIED.rawValue) ? Self.srgb.0 : primaries,
         transfer == Int32(AVCOL_TRC_UNSPECIFIED.rawValue) ? Self.srgb.1 : transfer)
    }

    /// Reads the tags; unspecified matrix -> BT.601 (swscale's default), unspecified range
    /// -> limited ("J" pixel formats, RGB and grey are full), unspecified 4:2:0 siting -> left
    /// (MPEG-2/H.264).
    init(frame: UnsafePointer<AVFrame>, layout: VideoPlaneLayout?) {
        let space = frame.pointee.colorspace
        matrix = ColorMatrix(space)
        let stated = frame.pointee.color_range != AVCOL_RANGE_UNSPECIFIED
        statesRange = stated || (layout?.forcesFullRange ?? false) || layout?.kind == .rgba
        fullRange = frame.pointee.color_range == AVCOL_RANGE_JPEG || (layout?.forcesFullRange ?? false)
            || layout?.kind == .rgba || (!stated && Self.isGrey(AVPixelFormat(frame.pointee.format)))
        primaries = Int32(frame.pointee.color_primaries.rawValue)
        transfer = Int32(frame.pointee.color_trc.rawValue)
        colorSpace = Int32(space.rawValue)
        let location = frame.pointee.chroma_location
        statesChromaLocation = location != AVCHROMA_LOC_UNSPECIFIED
        chromaLocation = Int32(location == AVCHROMA_LOC_UNSPECIFIED
            ? (layout?.forcesFullRange == true ? AVCHROMA_LOC_CENTER : AVCHROMA_LOC_LEFT).rawValue : location.rawValue)
    }

    /// A grey format (grey, grey + alpha, 1-bit): full range unless its range is stated, as
    /// swscale takes it and as a grey PNG or TIFF holds it.
    static func isGrey(_ format: AVPixelFormat) -> Bool {
        guard let descriptor = av_pix_fmt_desc_get(format)?.pointee else { return false }
        return descriptor.flags & UInt64(AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL) == 0 && descriptor.nb_components <= 2
    }

    /// An RGB format (gbrp, rgb24, rgba64, ...).
    static func isRGB(_ format: AVPixelFormat) -> Bool {
        guard let descriptor = av_pix_fmt_desc_get(format)?.pointee else { return false }
        return descriptor.flags & UInt64(AV_PIX_FMT_FLAG_RGB) != 0
    }

    /// Encoders whose YUV is limited range whatever the tags say (ProRes, WebP's VP8, TIFF's
    /// YCbCr as FFmpeg writes it, UtVideo): full-range input is converted for them, as ffmpeg's
    /// scaler does (its values were written as they were, and read 13 levels darker at black).
    static let limitedRangeEncoders: Set<String> = ["prores", "prores_ks", "prores_aw", "libwebp", "libwebp_anim", "tiff", "utvideo"]

    /// (Kr, Kb) of the matrix.
    var coefficients: (kr: Double, kb: Double) {
        switch matrix {
        case .bt601: return (0.299, 0.114)
        case .bt709: return (0.2126, 0.0722)
        case .bt2020: return (0.2627, 0.0593)
        case .smpte240m: return (0.212, 0.087)
        case .fcc: return (0.30, 0.11)
        }
    }

    /// Chroma samples sit on even luma columns (left, top-left, bottom-left siting).
    var chromaCositedX: Bool {
        [AVCHROMA_LOC_LEFT, AVCHROMA_LOC_TOPLEFT, AVCHROMA_LOC_BOTTOMLEFT].map { Int32($0.rawValue) }.contains(chromaLocation)
    }

    /// Vertical position of a chroma sample within its block of luma rows, in luma rows.
    var chromaOffsetY: Double {
        switch chromaLocation {
        case Int32(AVCHROMA_LOC_TOPLEFT.rawValue), Int32(AVCHROMA_LOC_TOP.rawValue): return 0
        case Int32(AVCHROMA_LOC_BOTTOMLEFT.rawValue), Int32(AVCHROMA_LOC_BOTTOM.rawValue): return 1
        default: return 0.5
        }
    }

    /// Code offsets and scales in normalised code units (code / (2^depth - 1)):
    /// (luma offset, chroma offset, luma scale, chroma scale).
    func range(bitDepth: Int) -> (lumaOffset: Double, chromaOffset: Double, lumaScale: Double, chromaScale: Double) {
        let maximum = Double((1 << bitDepth) - 1)
        let step = Double(1 << (bitDepth - 8))
        if fullRange {
            return (0, Double(1 << (bitDepth - 1)) / maximum, 1, 1)
        }
        return (16 * step / maximum, 128 * step / maximum, maximum / (219 * step), maximum / (224 * step))
    }

    /// Rows turning (Y', Pb, Pr) into R', G', B'.
    var toRGB: [[Double]] {
        let (kr, kb) = coefficients
        let kg = 1 - kr - kb
        return [[1, 0, 2 * (1 - kr)],
                [1, -2 * (1 - kb) * kb / kg, -2 * (1 - kr) * kr / kg],
                [1, 2 * (1 - kb), 0]]
    }

    /// Rows turning R', G', B' into (Y', Pb, Pr).
    var fromRGB: [[Double]] {
        let (kr, kb) = coefficients
        let kg = 1 - kr - kb
        return [[kr, kg, kb],
                [-kr / (2 * (1 - kb)), -kg / (2 * (1 - kb)), 0.5],
                [0.5, -kg / (2 * (1 - kr)), -kb / (2 * (1 - kr))]]
    }
}
