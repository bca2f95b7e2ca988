import CFFmpeg

/// Gives every decoded frame a timestamp that increases: raw .h264/.hevc streams carry none
/// and MPEG-PS leaves some frames without one, which the muxer refuses at the end. A missing
/// or non-increasing timestamp becomes the previous one plus one frame at the stream's rate,
/// as ffmpeg does.
struct TimestampSynthesizer {
    /// One frame in the stream's time base.
    let frameDuration: Int64
    private(set) var last: Int64?
    /// The last frame's own duration, where its packet stated one.
    private var lastDuration: Int64?

    init(frameRate: AVRational, timeBase: AVRational) {
        let rate = frameRate.num > 0 && frameRate.den > 0 ? frameRate : AVRational(num: 25, den: 1)
        frameDuration = max(1, av_rescale_q(1, AVRational(num: rate.den, den: rate.num), timeBase))
    }

    mutating func stamp(_ frame: MediaFrame) {
        var timestamp = frame.timestamp
        if let last, timestamp == velvet_av_nopts_value() || timestamp <= last {
            timestamp = last + frameDuration
        } else if timestamp == velvet_av_nopts_value() {
            timestamp = 0
        }
        frame.pointer.pointee.best_effort_timestamp = timestamp
        last = timestamp
        let duration = frame.pointer.pointee.pkt_duration
        lastDuration = duration > 0 ? duration : nil
    }

    /// When the last frame ends, in time-base units: its stated duration after it (a frame
    /// rate guessed from a slow stream can be far shorter), else one frame at the stream's rate.
    var end: Int64 { (last ?? 0) + (lastDuration ?? frameDuration) }
}
