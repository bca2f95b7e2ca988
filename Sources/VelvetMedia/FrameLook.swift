import CFFmpeg

/// What a render's plan takes from the first frame and keeps for every frame: the matrix and
/// range the frames are read with, the primaries and transfer the output is tagged with, and
/// the pixels' aspect. A spliced file (`cat a.ts b.ts`) can change them mid-stream, and
/// frames after the change would be read or shown wrongly (BT.601 values read as BT.709,
/// full-range levels tagged limited, square pixels stretched): the reader refuses it, as it
/// refuses a change of size or pixel format.
struct FrameLook {
    let matrix: ColorMatrix
    let fullRange: Bool
    let primaries: AVColorPrimaries
    let transfer: AVColorTransferCharacteristic
    /// The sample aspect ratio, 1:1 where unstated.
    let aspect: AVRational

    init(_ frame: MediaFrame) {
        // The pixel format is the same in every frame (checked before): the tags alone decide.
        matrix = ColorMatrix(frame.pointer.pointee.colorspace)
        fullRange = frame.pointer.pointee.color_range == AVCOL_RANGE_JPEG
        (primaries, transfer) = (frame.pointer.pointee.color_primaries, frame.pointer.pointee.color_trc)
        let stated = frame.pointer.pointee.sample_aspect_ratio
        // Reduced (times 1), so the refusal names it as 4:3, not 8:6.
        aspect = stated.num > 0 && stated.den > 0 ? av_mul_q(stated, AVRational(num: 1, den: 1)) : AVRational(num: 1, den: 1)
    }

    /// What changed from `self` to `next`, in the words of the reader's refusal.
    func change(to next: FrameLook) -> String? {
        func name(_ text: UnsafePointer<CChar>?, _ value: UInt32) -> String { text.map { String(cString: $0) } ?? "\(value)" }
        if matrix != next.matrix { return "the colour matrix changes mid-stream (\(matrix.rawValue) -> \(next.matrix.rawValue))" }
        if fullRange != next.fullRange {
            return "the colour range changes mid-stream (\(fullRange ? "full" : "limited") -> \(next.fullRange ? "full" : "limited"))"
        }
        if primaries != next.primaries {
            return "the colour primaries change mid-stream (\(name(av_color_primaries_name(primaries), primaries.rawValue)) -> "
                + "\(name(av_color_primaries_name(next.primaries), next.primaries.rawValue)))"
        }
        if transfer != next.transfer {
            return "the transfer changes mid-stream (\(name(av_color_transfer_name(transfer), transfer.rawValue)) -> "
                + "\(name(av_color_transfer_name(next.transfer), next.transfer.rawValue)))"
        }
        if av_cmp_q(aspect, next.aspect) != 0 {
            return "the pixel aspect changes mid-stream (\(aspect.num):\(aspect.den) -> \(next.aspect.num):\(next.aspect.den))"
        }
        return nil
    }
}
