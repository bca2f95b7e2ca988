import CFFmpeg

/// Places frames on the output's clock, the coarser of the encoder's and the muxer's ticks
/// (GIF counts 1/100 s, Matroska 1/1000 s, MPEG-2 one frame), so that no two frames share a
/// timestamp once rescaled: a muxer refuses that (GIF, MPEG-PS) or writes it (Matroska).
/// A frame goes to its nearest tick or, if that is taken, the next free one, so it moves
/// less than one tick later; one that would have to move further is dropped, as ffmpeg's
/// `-fps_mode vfr` drops what its output clock cannot hold (120 fps into a GIF).
struct OutputClock {
    let encoderTimeBase: AVRational
    /// The coarser of the encoder's and the muxer's time bases.
    let tick: AVRational
    private var lastTick: Int64?
    private(set) var dropped = 0

    init(encoder: AVRational, muxer: AVRational) {
        encoderTimeBase = encoder
        tick = av_q2d(muxer) > av_q2d(encoder) ? muxer : encoder
    }

    /// The timestamp in the encoder's time base for a frame at `pts` in `timeBase`, or nil
    /// where the frame is to be dropped.
    mutating func place(_ pts: Int64, in timeBase: AVRational) -> Int64? {
        let ticks = Double(pts) * av_q2d(timeBase) / av_q2d(tick)
        var placed = Int64(ticks.rounded())
        if let lastTick {
            guard ticks > Double(lastTick) else { dropped += 1; return nil }
            placed = max(placed, lastTick + 1)
        }
        lastTick = placed
        return av_rescale_q(placed, tick, encoderTimeBase)
    }

    /// One line for the render's warnings, or nil where every frame kept its place.
    func warning(output path: String) -> String? {
        guard dropped > 0 else { return nil }
        return "\(path): \(dropped) frame(s) dropped: their timestamps fall closer together than its clock's tick "
            + "(\(tick.num)/\(tick.den) s) can hold"
    }
}
