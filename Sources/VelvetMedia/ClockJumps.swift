import CFFmpeg

/// Closes the jumps of an input whose clock may jump (MPEG-TS and MPEG-PS files joined with
/// `cat`, a broadcast recording across a splice): where a stream's decode time moves by more
/// than ten seconds from its last packet's, every stream from there on is moved by the jump, as
/// ffmpeg does past its `-dts_delta_threshold` (10 s), so the parts follow one another with
/// their streams in step. A smaller step back is left to the repairs after it (the video's
/// `TimestampSynthesizer`, the copied streams' `PacketTimeline`).
struct ClockJumps {
    static let threshold = 10.0
    /// Seconds added to every timestamp from here on.
    private(set) var offset = 0.0
    private var lastDecode: [Int32: Double] = [:]

    /// Moves `packet` by the jumps closed so far; `tells`: whether its stream may close one.
    mutating func place(_ packet: UnsafeMutablePointer<AVPacket>, timeBase: AVRational, tells: Bool) {
        let none = velvet_av_nopts_value()
        let stated = packet.pointee.dts != none ? packet.pointee.dts : packet.pointee.pts
        guard stated != none else { return }
        let index = packet.pointee.stream_index, scale = av_q2d(timeBase)
        var decode = Double(stated) * scale + offset
        if tells, let last = lastDecode[index], abs(decode - last) > Self.threshold {
            offset -= decode - last
            decode = last
        }
        lastDecode[index] = decode
        guard offset != 0 else { return }
        let shift = Int64((offset / scale).rounded())
        if packet.pointee.dts != none { packet.pointee.dts += shift }
        if packet.pointee.pts != none { packet.pointee.pts += shift }
    }
}
