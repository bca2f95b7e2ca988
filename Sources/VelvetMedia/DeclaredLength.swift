import CFFmpeg

/// How long the container says the video stream is: its frame count (an MP4 index) or,
/// failing that, the time its last frame ends (the stream's duration, Matroska's DURATION tag
/// for the track, or the file's when the video is its only stream). Nil when it declares
/// none of these, or only a duration guessed from the bit rate (raw .h264), which is no promise.
struct DeclaredLength: Sendable {
    enum Basis: Sendable, Equatable {
        case frames(Int)
        /// Seconds from the stream's first frame to the end of its last.
        case seconds(start: Double, end: Double)
    }

    let basis: Basis
    let frameRate: Double
    /// Seconds of the stream's first frame.
    let start: Double
    /// The count includes empty chunks, one a tick (AVI: a capture's dropped frames), so a
    /// stream that decodes fewer frames is whole when its last ends where the count says.
    let countsEmptyChunks: Bool

    /// An image sequence's: its files' count (`ImageSequence.files`).
    init(pictures: Int, frameRate: Double) {
        basis = .frames(pictures)
        self.frameRate = frameRate > 0 ? frameRate : 25
        start = 0
        countsEmptyChunks = false
    }

    init?(stream: UnsafePointer<AVStream>, context: UnsafePointer<AVFormatContext>, frameRate: Double) {
        self.frameRate = frameRate > 0 ? frameRate : 25
        let none = velvet_av_nopts_value()
        let timeBase = av_q2d(stream.pointee.time_base)
        let start = stream.pointee.start_time == none ? 0 : Double(stream.pointee.start_time) * timeBase
        self.start = start
        countsEmptyChunks = String(cString: context.pointee.iformat.pointee.name) == "avi"
        // The stream's own length: Matroska's DURATION tag for the track, else its duration,
        // which FFmpeg fills in from the file's for Matroska (the longest stream's): that one
        // speaks for the video only when the video is all there is.
        var streamSeconds: Double?
        let matroska = String(cString: context.pointee.iformat.pointee.name).hasPrefix("matroska")
        if let tag = av_dict_get(stream.pointee.metadata, "DURATION", nil, 0) {
            // FFmpeg's Matroska muxer writes the time the track ends, not its length: a video
            // track that starts late (after the audio) is that much shorter. (Read as an end,
            // a tag that is a length can only promise less, never more.)
            streamSeconds = Self.seconds(clock: String(cString: tag.pointee.value)).map { max(0, $0 - max(0, start)) }
        } else if stream.pointee.duration != none, stream.pointee.duration > 0, !matroska || context.pointee.nb_streams == 1 {
            streamSeconds = Double(stream.pointee.duration) * timeBase
        }
        if stream.pointee.nb_frames > 0 {
            let count = Self.shownFrames(stream) ?? Int(stream.pointee.nb_frames)
            // An edit list can show fewer frames than the index holds (a stream-copied cut keeps
            // the pre-roll before its first key frame): then the time shown is the promise.
            if let seconds = streamSeconds, Int((seconds * self.frameRate).rounded()) + Self.slack(count) < count {
                basis = .seconds(start: start, end: start + seconds)
            } else {
                basis = .frames(count)
            }
        } else if let seconds = streamSeconds, seconds > 0 {
            basis = .seconds(start: start, end: start + seconds)
        } else if context.pointee.duration != none, context.pointee.duration > 0,
                  context.pointee.duration_estimation_method != AVFMT_DURATION_FROM_BITRATE,
                  context.pointee.nb_streams == 1 {
            // The file's duration is the longest stream's: it speaks for the video only when
            // the video is all there is (audio or subtitles may run on past the last frame).
            let fileStart = context.pointee.start_time == none ? 0 : Double(context.pointee.start_time) / Double(AV_TIME_BASE)
            let duration = Double(context.pointee.duration) / Double(AV_TIME_BASE)
            // A duration FFmpeg measured from timestamps (MPEG-PS, TS) runs from the first one;
            // one a demuxer read from its header (Matroska) ends that long after zero.
            let measured = context.pointee.duration_estimation_method == AVFMT_DURATION_FROM_PTS
            basis = .seconds(start: fileStart, end: measured ? fileStart + duration : max(duration, fileStart))
        } else {
            return nil
        }
    }

    /// The frames an MP4 index holds less those its edit list hides (a stream-copied cut's
    /// pre-roll before its first key frame, which the demuxer marks to be discarded); nil
    /// where the index is not one entry per frame.
    private static func shownFrames(_ stream: UnsafePointer<AVStream>) -> Int? {
        let entries = Int(avformat_index_get_entries_count(stream))
        guard entries == Int(stream.pointee.nb_frames) else { return nil }
        let mutable = UnsafeMutablePointer(mutating: stream)
        let hidden = (0..<entries).filter { index in
            (avformat_index_get_entry(mutable, Int32(index))?.pointee.flags ?? 0) & AVINDEX_DISCARD_FRAME != 0
        }.count
        return entries - hidden
    }

    /// Frames a stream may end short of a count without being damaged.
    private static func slack(_ count: Int) -> Int { max(2, count / 100) }

    /// Seconds of a Matroska tag's "HH:MM:SS.nnnnnnnnn"; nil if it is not one.
    static func seconds(clock: String) -> Double? {
        let fields = clock.split(separator: ":")
        guard fields.count == 3, let hours = Double(fields[0]), let minutes = Double(fields[1]),
              let seconds = Double(fields[2]) else { return nil }
        let total = hours * 3600 + minutes * 60 + seconds
        return total.isFinite && total > 0 ? total : nil
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
    /// judged by time, so variable-rate video is not miscounted. An AVI's count is met by the
    /// time too (`countsEmptyChunks`).
    func isShort(decodedFrames: Int, decodedEnd: Double) -> Bool {
        switch basis {
        case .frames(let count):
            let endsWhereCounted = countsEmptyChunks && decodedEnd + Double(Self.slack(count)) / frameRate >= start + Double(count) / frameRate
            return decodedFrames + Self.slack(count) < count && !endsWhereCounted
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
