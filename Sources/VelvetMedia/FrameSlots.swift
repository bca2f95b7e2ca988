import CFFmpeg

/// Numbers the frames of an output that holds one frame per tick of its rate beside its
/// audio (AVI, Theora; y4m holds no audio and numbers every frame in turn), as FFmpeg 5.1's
/// `-fps_mode cfr` does (`do_video_out`): each frame takes the next tick; one more than 1.1
/// ticks late is dropped, and one more than 1.1 ticks early takes the ticks up to its time,
/// the frame before filling all but the last `round(early - 0.6)` of them and the frame itself
/// the rest (the first frame fills those before it: a video that starts after its audio). So
/// a variable-rate input keeps its timing and its sync with the audio, and timestamps that
/// jitter around a tick lose no frame (rounding each to its nearest tick dropped a quarter of
/// a webcam clip's frames).
struct FrameSlots {
    /// One tick: 1/rate.
    let tick: AVRational
    private var next: Int64 = 0
    private(set) var repeated: Int64 = 0
    private(set) var dropped = 0

    /// Seconds the input's timeline lasts, where it states them: a frame past its end (and a
    /// second more) follows a break in the input's clock, not a pause, so it takes the next
    /// tick instead of a gap's worth of repeats. With no length stated every gap is filled.
    let end: Double?
    private(set) var breaks = 0

    /// How far off its tick a frame may be before it is dropped or the gap before it filled
    /// (FFmpeg's 1.1 ticks), and how much of an early frame's lead the frame before fills.
    private static let tolerance = 1.1, leadKept = 0.6

    init(tick: AVRational, end: Double?) { (self.tick, self.end) = (tick, end) }

    /// Where a frame at `pts` in `timeBase` (none: the next tick) goes: from tick `first`,
    /// `previous` ticks of the frame before, then `copies` of this one; nil where it is dropped.
    mutating func place(_ pts: Int64?, in timeBase: AVRational) -> (first: Int64, previous: Int64, copies: Int64)? {
        var lead = 0.0 // ticks this frame's time is past the next tick (negative: late)
        if let pts {
            let seconds = Double(pts) * av_q2d(timeBase)
            let wanted = seconds / av_q2d(tick) - Double(next)
            if let end, seconds > end + 1 {
                if wanted > Self.tolerance { breaks += 1 }
            } else {
                lead = wanted
            }
        }
        let span = lead + 1 // the frame's own tick counted
        guard span >= -Self.tolerance else { dropped += 1; return nil }
        var count: Int64 = 1, previous: Int64 = 0
        if span > Self.tolerance {
            count = Int64(span.rounded(.toNearestOrEven))
            if lead > Self.tolerance { previous = Int64((lead - Self.leadKept).rounded(.toNearestOrEven)) }
        }
        let first = next
        next += count
        repeated += count - 1
        return (first, previous, count - previous)
    }

    /// One line for the render's warnings, or nil where every frame took its own tick.
    func warning(output path: String) -> String? {
        guard repeated > 0 || dropped > 0 || breaks > 0 else { return nil }
        let closed = breaks > 0 ? "; \(breaks) jump(s) past the input's stated end closed" : ""
        return "\(path) holds \(String(format: "%g", 1 / av_q2d(tick))) frames a second: \(repeated) frame(s) repeated "
            + "over gaps in the input's timing, \(dropped) dropped" + closed
    }
}
