import CFFmpeg

/// How long the container says the video stream is: its frame count (an MP4 index) or,
/// failing that, the time its last frame ends. Nil when it declares neither, or only a
/// duration guessed from the bit rate (raw .h264), which is no promise.
struct DeclaredLength: Sendable {
    enum Basis: Sendable, Equatable {
        case frames(Int)
        /// Seconds from the stream's first frame to the end of its last.
        case seconds(start: Double, end: Double)
    }

    let basis: Basis
    let frameRate: Double

    init?(stream: UnsafePointer<AVStream>, context: UnsafePointer<AVFormatContext>, frameRate: Double) {
        self.frameRate = frameRate > 0 ? frameRate : 25
        let none = velvet_av_nopts_value()
        if stream.pointee.nb_frames > 0 {
            basis = .frames(Int(stream.pointee.nb_frames))
        } else if stream.pointee.duration != none, stream.pointee.duration > 0 {
            let timeBase = av_q2d(stream.pointee.time_base)
            let start = stream.pointee.start_time == none ? 0 : Double(stream.pointee.start_time) * timeBase
            basis = .seconds(start: start, end: start + Double(stream.pointee.duration) * timeBase)
        } else if context.pointee.duration != none, context.pointee.duration > 0,
                  context.pointee.duration_estimation_method != AVFMT_DURATION_FROM_BITRATE {
            let start = context.pointee.start_time == none ? 0 : Double(context.pointee.start_time) / Double(AV_TIME_BASE)
            let duration = Double(context.pointee.duration) / Double(AV_TIME_BASE)
            // A duration FFmpeg measured from timestamps (MPEG-PS, TS) runs from the first one;
            // one a demuxer read from its header (Matroska) ends that long after zero.
            let measured = context.pointee.duration_estimation_method == AVFMT_DURATION_FROM_PTS
            basis = .seconds(start: start, end: measured ? start + duration : max(duration, start))
        } else {
            return nil
        }
    }

    /// The frames declared, or about as many as the duration holds.
    var frames: Int {
        switch basis {
        case .frames(let count): return count
        case .seconds(let start, let end): return max(1, Int(((end - start) * frameRate).rounded()))
        }
    }

    /// Whether a stream that ended after `decodedFrames` frames, the last ending at
    /// `decodedEnd` seconds, fell short of the declaration. A frame or two (B-frame edit
    /// lists, a rounded duration, the last frame's length) or 1 % is normal; a duration is
    /// judged by time, so variable-rate video is not miscounted.
    func isShort(decodedFrames: Int, decodedEnd: Double) -> Bool {
        switch basis {
        case .frames(let count): return decodedFrames + max(2, count / 100) < count
        case .seconds(let start, let end): return decodedEnd + max(2 / frameRate, (end - start) / 100) < end
        }
    }

    /// "249" or "about 250 (10.00 s)", for messages.
    var description: String {
        switch basis {
        case .frames(let count): return "\(count)"
        case .seconds(let start, let end): return "about \(frames) (\(String(format: "%.2f", end - start)) s)"
        }
    }
}
