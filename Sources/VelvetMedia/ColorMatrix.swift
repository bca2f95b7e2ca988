import CFFmpeg

/// The YUV matrix a frame's tag names, as Velvet reads frames: an unspecified or other matrix
/// is BT.601 (swscale's default).
public enum ColorMatrix: String, Sendable {
    case bt601, bt709, bt2020, smpte240m, fcc

    init(_ space: AVColorSpace) {
        switch space {
        case AVCOL_SPC_BT709: self = .bt709
        case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: self = .bt2020
        case AVCOL_SPC_SMPTE240M: self = .smpte240m
        case AVCOL_SPC_FCC: self = .fcc
        default: self = .bt601
        }
    }
}
