import CFFmpeg

/// Keeps a passed-through stream's timestamps increasing where its input's do not.
/// - A restart (MPEG-TS files joined with `cat`: the clock goes back by more than a packet)
///   moves the packet, and every packet after it, to follow the previous packet's end, as
///   the video's frames follow the frame before them (`TimestampSynthesizer`), so both stay
///   in step.
/// - A packet a little before the previous one (less than a packet back, a muxer's rounding)
///   moves alone to just after it, as ffmpeg moves non-monotonic timestamps.
/// Packets at the same time as the previous one are left alone: Matroska takes them (two
/// subtitle cues that start together).
struct PacketTimeline {
    private var offset: Int64 = 0
    private var lastDecode: Int64?
    private var lastEnd: Int64?

    mutating func place(_ packet: UnsafeMutablePointer<AVPacket>) {
        let none = velvet_av_nopts_value()
        let stated = packet.pointee.dts != none ? packet.pointee.dts : packet.pointee.pts
        guard stated != none else { return }
        var decode = stated + offset, nudge: Int64 = 0
        if let lastDecode, decode < lastDecode {
            let lastLength = max((lastEnd ?? lastDecode) - lastDecode, 1)
            if lastDecode - decode < lastLength {
                nudge = lastDecode + 1 - decode
            } else {
                offset += (lastEnd ?? lastDecode + 1) - decode
                decode = stated + offset
            }
        }
        if packet.pointee.dts != none { packet.pointee.dts += offset + nudge }
        if packet.pointee.pts != none { packet.pointee.pts = max(packet.pointee.pts + offset, packet.pointee.dts) }
        lastDecode = decode + nudge
        lastEnd = lastDecode! + max(packet.pointee.duration, 0)
    }
}
