import CFFmpeg

/// Numbers the frames of an output that holds one frame per tick of its rate beside its
/// audio (AVI, Theora; y4m holds no audio and numbers every frame in turn): each frame goes
/// to the tick its time falls on, so a variable-rate input keeps its timing, and its sync
/// with the audio, as ffmpeg's `-fps_mode cfr` keeps them. The ticks of a gap repeat the
/// frame before it (the first frame fills those before it: a video that starts after its
/// audio); a frame whose tick is taken is dropped.
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

    init(tick: AVRational, end: Double?) { (self.tick, self.end) = (tick, end) }

    /// The tick for a frame at `pts` in `timeBase` (none: the next) and how many ticks before
    /// it to fill with the frame before; nil where the frame is to be dropped.
    mutating func place(_ pts: Int64?, in timeBase: AVRational) -> (tick: Int64, fill: Int64)? {
        var placed = next
        if let pts {
            let wanted = Int64((Double(pts) * av_q2d(timeBase) / av_q2d(tick)).rounded())
            guard wanted >= next else { dropped += 1; return nil }
            if let end, Double(wanted) * av_q2d(tick) > end + 1 {
                if wanted > next { breaks += 1 }
            } else {
                placed = wanted
            }
        }
        let fill = placed - next
        repeated += fill
        next = placed + 1
        return (placed, fill)
    }

    /// One line for the render's warnings, or nil where every frame took its own tick.
    func warning(output path: String) -> String? {
        guard repeated > 0 || dropped > 0 || breaks > 0 else { return nil }
        let closed = breaks > 0 ? "; \(breaks) jump(s) past the input's stated end closed" : ""
        return "\(path) holds \(String(format: "%g", 1 / av_q2d(tick))) frames a second: \(repeated) frame(s) repeated "
            + "over gaps in the input's timing, \(dropped) dropped" + closed
    }
}
