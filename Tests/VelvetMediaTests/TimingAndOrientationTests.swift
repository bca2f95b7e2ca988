import Foundation
import VelvetTestSupport
import XCTest

/// Frame count, timestamps and orientation survive a render.
final class TimingAndOrientationTests: XCTestCase {
    func testVariableFrameRateTimestampsAreKept() throws {
        let scratch = try Scratch()
        let input = scratch.path("vfr.mkv"), output = scratch.path("out.mkv")
        // Irregular gaps: 40 ms for 10 frames, then 100 ms, then 15 ms.
        // (Millisecond time bases throughout: at lavfi's 1/25 the 15 ms gaps collapsed into repeated timestamps.)
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-frames:v", "30",
                         "-vf", "settb=1/1000,setpts='(if(lt(N,10),N*0.04,if(lt(N,20),0.4+(N-10)*0.1,1.4+(N-20)*0.015)))/TB'",
                         "-fps_mode", "passthrough", "-enc_time_base", "1/1000", "-c:v", "libx264", input])
        let inputTimes = try Tool.probe(input, "frame=pts_time")
        XCTAssertGreaterThan(Set(gaps(inputTimes)).count, 2, "the test clip must really be VFR: \(inputTimes)")
        let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--preset-x264", "ultrafast", "--no-effects"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try Tool.probe(output, "frame=pts_time"), inputTimes)
    }

    /// Frames far apart (1000 s each, the frame rate guessed as 1 fps) end where their
    /// packets say: the file is whole, not "damaged after 6 frames of about 6000".
    func testFramesFarApartAreNotTakenForDamage() throws {
        let scratch = try Scratch()
        let input = scratch.path("slow.mkv"), output = scratch.path("out.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-frames:v", "6", "-vf", "setpts=N*1000/TB",
                         "-enc_time_base", "1/1", "-r", "1/1000", "-fps_mode", "passthrough", "-c:v", "libx264", input])
        XCTAssertEqual(try Tool.probe(input, "stream=r_frame_rate"), "1/1", "the rate FFmpeg guesses for the clip")
        let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--preset-x264", "ultrafast", "--no-effects"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try Tool.probe(output, "frame=pts_time"), try Tool.probe(input, "frame=pts_time"))
    }

    func testRotationMetadataIsHonouredAndKept() throws {
        let scratch = try Scratch()
        let plain = scratch.path("plain.mp4"), input = scratch.path("rotated.mp4"), output = scratch.path("out.mp4")
        let reference = scratch.path("ref.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=192x108:rate=10", "-t", "1", "-c:v", "libx264", plain])
        try Tool.ffmpeg(["-i", plain, "-c", "copy", "-metadata:s:v:0", "rotate=90", input])
        let rotation = try Tool.probe(input, "stream_side_data=rotation")
        XCTAssertFalse(rotation.isEmpty, "the test clip must carry a display matrix")
        let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--preset-x264", "ultrafast", "--no-effects"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try Tool.probe(output, "stream_side_data=rotation"), rotation)
        XCTAssertEqual(try Tool.probe(output, "stream=width,height"), "192,108")
        try Tool.ffmpeg(["-i", plain, "-c:v", "libx264", "-crf", "18", "-preset", "ultrafast", reference])
        XCTAssertGreaterThanOrEqual(try Tool.psnr(output, reference), 50, "stored pixels must equal a plain transcode")
    }

    func testStillOutputFromVideoTakesTheFrameAskedFor() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.mp4"), output = scratch.path("frame.png"), reference = scratch.path("ref.png")
        // 4:4:4, so FFmpeg's conversion to RGB is comparable with Velvet's (no chroma upsampling).
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-t", "1", "-pix_fmt", "yuv444p", "-c:v", "libx264",
                         "-crf", "0", input])
        let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--no-effects", "--frame", "7"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try Tool.probe(output, "stream=width,height"), "160,120")
        try Tool.ffmpeg(["-i", input, "-vf", "select=eq(n\\,7)", "-frames:v", "1", reference])
        XCTAssertGreaterThan(try Tool.psnr(output, reference), 40, "frame 7, not frame 0")
        // A one-frame video needs no choice.
        let single = scratch.path("single.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-frames:v", "1", "-c:v", "libx264", single])
        XCTAssertEqual(try Tool.run(Tool.velvet, ["render", single, "-o", scratch.path("single.png"), "--no-effects"]).status, 0)
        // Nor one whose container states no length (NUT): it was "a video (several frames)".
        let nut = scratch.path("single.nut")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-frames:v", "1", "-c:v", "ffv1", nut])
        let fromNUT = try Tool.run(Tool.velvet, ["render", nut, "-o", scratch.path("nut.png"), "--no-effects"])
        XCTAssertEqual(fromNUT.status, 0, fromNUT.stderr)
        let twoFrames = scratch.path("two.nut")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-frames:v", "2", "-c:v", "ffv1", twoFrames])
        let refused = try Tool.run(Tool.velvet, ["render", twoFrames, "-o", scratch.path("two.png"), "--no-effects"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("is a video"), refused.stderr)
    }

    /// Frames closer together than the output's clock (a 0.3 ms jitter into Matroska's 1 ms,
    /// 120 fps into GIF's 1/100 s) never share a timestamp: a frame moves to the next free tick
    /// or, where it would move a whole tick, is dropped with a warning (GIF refused the
    /// render with "Invalid argument"; Matroska wrote two frames at one time).
    func testFramesStayApartOnACoarserOutputClock() throws {
        let scratch = try Scratch()
        let tenThousandths = scratch.path("fine.mp4"), jittered = scratch.path("jittered.mp4"), fast = scratch.path("fast.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-frames:v", "10", "-c:v", "mjpeg",
                         "-video_track_timescale", "10000", tenThousandths])
        try Tool.ffmpeg(["-i", tenThousandths, "-c", "copy", "-video_track_timescale", "10000",
                         "-bsf:v", "setts=ts='if(eq(N,5),4003,N*1000)'", jittered])
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=120", "-frames:v", "120", "-c:v", "mjpeg", fast])
        func times(_ path: String) throws -> [Double] {
            try Tool.probe(path, "frame=best_effort_timestamp_time").split(separator: "\n").compactMap { Double($0) }
        }
        for output in ["jittered.mkv", "jittered.gif", "jittered.mpg"] {
            let result = try Tool.run(Tool.velvet, ["render", jittered, "-o", scratch.path(output), "--no-effects"])
            XCTAssertEqual(result.status, 0, "\(output): \(result.stderr)")
            XCTAssertEqual(result.messages, "", output)
            let counted = try Tool.run("ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0",
                                                   scratch.path(output)]).stdout
            XCTAssertEqual(counted.trimmingCharacters(in: .whitespacesAndNewlines), "10", "\(output): every frame kept")
            // MPEG-PS leaves some frames without a timestamp to read back.
            guard output != "jittered.mpg" else { continue }
            let written = try times(scratch.path(output))
            XCTAssertEqual(written, written.sorted(), output)
            XCTAssertEqual(Set(written).count, 10, "\(output): no two frames at one time: \(written)")
        }
        let gif = scratch.path("fast.gif")
        let result = try Tool.run(Tool.velvet, ["render", fast, "-o", gif, "--no-effects"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let written = try times(gif)
        XCTAssertEqual(Set(written).count, written.count, "no two frames at one time")
        XCTAssertEqual(written.count, 101, "one second at 1/100 s ticks, the first frame's included")
        XCTAssertEqual(result.messages, "velvet: warning: \(gif): 19 frame(s) dropped: their timestamps fall closer together "
                       + "than its clock's tick (1/100 s) can hold\n")
    }

    /// MPEG-TS files joined with `cat` restart their clock: the audio copied beside the video
    /// follows on after the first part as the video does (the render failed, "Invalid argument").
    func testJoinedTransportStreamsKeepTheirAudioInStep() throws {
        let scratch = try Scratch()
        let part = scratch.path("part.ts"), joined = scratch.path("joined.ts"), output = scratch.path("out.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=1", "-f", "lavfi", "-i", "sine=duration=1",
                         "-c:v", "libx264", "-bf", "0", "-c:a", "aac", "-shortest", part])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: part))
        try (bytes + bytes).write(to: URL(fileURLWithPath: joined))
        let result = try Tool.run(Tool.velvet, ["render", joined, "-o", output, "--no-effects"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try Tool.probe(output, "stream=nb_frames"), "50")
        let audio = try XCTUnwrap(Double(try Tool.probe(output, "stream=duration", stream: "a:0")))
        XCTAssertEqual(audio, 2.0, accuracy: 0.15, "both parts' audio, one after the other")
        let audioTimes = try Tool.probe(output, "packet=pts", stream: "a:0").split(separator: "\n").compactMap { Int($0) }
        XCTAssertEqual(audioTimes, audioTimes.sorted(), "the audio's timestamps increase")
        // A second part whose clock runs 100 s ahead: the jump is closed for every stream, as
        // ffmpeg closes one past 10 s in a TS (it left 99 s of frozen, silent video; AVI's
        // header declared 101 s for 2 s of frames).
        let ahead = scratch.path("ahead.ts"), jumping = scratch.path("jumping.ts")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=1", "-f", "lavfi", "-i", "sine=duration=1",
                         "-c:v", "libx264", "-bf", "2", "-c:a", "aac", "-shortest", "-output_ts_offset", "100", ahead])
        try (bytes + Data(contentsOf: URL(fileURLWithPath: ahead))).write(to: URL(fileURLWithPath: jumping))
        for name in ["jumped.mp4", "jumped.avi"] {
            let jumped = scratch.path(name)
            let result = try Tool.run(Tool.velvet, ["render", jumping, "-o", jumped, "--no-effects"])
            XCTAssertEqual(result.status, 0, "\(name): \(result.stderr)")
            let seconds = try XCTUnwrap(Double(try Tool.probe(jumped, "format=duration")), name)
            XCTAssertLessThan(seconds, 2.5, "\(name): the two parts, one after the other")
            // AVI repeats a frame where a part's video starts after its audio (B-frame delay).
            let frames = Int(try Tool.probe(jumped, "stream=nb_frames").split(separator: "\n").first ?? "") ?? 0
            XCTAssertTrue((50...52).contains(frames), "\(name): \(frames) frames")
        }
    }

    /// `--frame` counts frames, also those that share a timestamp (it was refused against a
    /// count estimated from the duration: "the input has 9 frame(s)" for 10).
    func testFrameChoiceCountsFramesThatShareATimestamp() throws {
        let scratch = try Scratch()
        let source = scratch.path("source.mkv"), input = scratch.path("pairs.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-frames:v", "10", "-c:v", "mjpeg", source])
        try Tool.ffmpeg(["-i", source, "-c", "copy", "-bsf:v", "setts=ts='floor(N/2)*200'", input])
        XCTAssertEqual(try Tool.probe(input, "packet=pts").split(separator: "\n").count, 10)
        let last = try Tool.run(Tool.velvet, ["render", input, "-o", scratch.path("last.png"), "--no-effects", "--frame", "9"])
        XCTAssertEqual(last.status, 0, last.stderr)
        let past = try Tool.run(Tool.velvet, ["render", input, "-o", scratch.path("past.png"), "--no-effects", "--frame", "10"])
        XCTAssertEqual(past.status, 1)
        XCTAssertEqual(past.stderr, "velvet: error: cannot render \(input): --frame 10 is past the end (the input has 10 frame(s))\n")
    }

    /// A stream-copied cut of an MP4 keeps the frames before the cut's first key frame, hidden
    /// by its edit list: they are not counted (the refusal said 75 frames where 42 show).
    func testAnEditListCutCountsTheFramesItShows() throws {
        let scratch = try Scratch()
        let source = scratch.path("source.mp4"), cut = scratch.path("cut.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=3", "-c:v", "libx264", "-g", "50", source])
        try Tool.ffmpeg(["-ss", "1.3", "-i", source, "-c", "copy", cut])
        let counted = try Tool.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                               "stream=nb_frames,nb_read_frames", "-of", "csv=p=0", cut]).stdout
        XCTAssertEqual(counted.trimmingCharacters(in: .whitespacesAndNewlines), "75,42", "the index holds 75 frames, 42 show")
        let output = scratch.path("frame.png")
        let result = try Tool.run(Tool.velvet, ["render", cut, "-o", output, "--no-effects"])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("\(cut) is a video (42 frames)"), result.stderr)
        let past = try Tool.run(Tool.velvet, ["render", cut, "-o", output, "--no-effects", "--frame", "42"])
        XCTAssertTrue(past.stderr.contains("the input has 42 frame(s)"), past.stderr)
        XCTAssertEqual(try Tool.run(Tool.velvet, ["render", cut, "-o", output, "--no-effects", "--frame", "41"]).status, 0)
    }

    /// AVI and Ogg Theora hold one frame per tick: a gap in a variable-rate input, or a video
    /// that starts after its audio, is filled by repeating a frame, as ffmpeg does, so the
    /// video keeps its length and its sync with the audio (it lost the gap: 2 s of video
    /// beside 3 s of audio).
    func testConstantRateOutputsFillTheInputsGaps() throws {
        let scratch = try Scratch()
        let gap = scratch.path("gap.mkv"), late = scratch.path("late.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10:duration=3", "-f", "lavfi", "-i", "sine=duration=3",
                         "-vf", "select='not(between(n,10,19))'", "-fps_mode", "vfr", "-c:v", "libx264", "-c:a", "aac", gap])
        try Tool.ffmpeg(["-f", "lavfi", "-i", "sine=duration=3", "-itsoffset", "1", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10:duration=2",
                         "-map", "0", "-map", "1", "-c:v", "libx264", "-bf", "0", "-c:a", "aac", late])
        for (input, name) in [(gap, "gap"), (late, "late")] {
            for container in ["avi", "ogv"] {
                let output = scratch.path("\(name).\(container)")
                let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--no-effects"])
                XCTAssertEqual(result.status, 0, result.stderr)
                XCTAssertEqual(result.messages, "velvet: warning: \(output) holds 10 frames a second: 10 frame(s) repeated over gaps "
                               + "in the input's timing, 0 dropped\n")
                let seconds = try XCTUnwrap(Double(try Tool.probe(output, "stream=duration")), output)
                XCTAssertEqual(seconds, 3.0, accuracy: 0.05, "\(output): the video is as long as the input's timeline")
            }
        }
        // A late start past ten seconds is a pause too (it was closed as a clock break, the video
        // 12 s ahead of its audio); only a frame past the input's stated end follows a break.
        let later = scratch.path("later.mp4"), plainVideo = scratch.path("plain.mp4"), audio = scratch.path("a.m4a")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x72:rate=10", "-frames:v", "20", "-c:v", "libx264", "-bf", "0", plainVideo])
        try Tool.ffmpeg(["-f", "lavfi", "-i", "sine=duration=15", "-c:a", "aac", audio])
        try Tool.ffmpeg(["-itsoffset", "12", "-i", plainVideo, "-i", audio, "-map", "0", "-map", "1", "-c", "copy", later])
        let laterAVI = scratch.path("later.avi")
        let laterResult = try Tool.run(Tool.velvet, ["render", later, "-o", laterAVI, "--no-effects"])
        XCTAssertEqual(laterResult.status, 0, laterResult.stderr)
        XCTAssertEqual(try Tool.probe(laterAVI, "stream=nb_frames"), "140", "120 repeats of the first frame, then its 20")
        // Past AVI's 1000 frames a second (the muxer refused the header, "Invalid argument").
        let fast = scratch.path("fast.mp4"), fastAVI = scratch.path("fast.avi")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x72:rate=2000", "-frames:v", "20", "-c:v", "libx264", "-bf", "0",
                         "-video_track_timescale", "90000", fast])
        let fastResult = try Tool.run(Tool.velvet, ["render", fast, "-o", fastAVI, "--no-effects"])
        XCTAssertEqual(fastResult.status, 0, fastResult.stderr)
        XCTAssertEqual(try Tool.probe(fastAVI, "stream=r_frame_rate"), "1000/1")
        // Frames every 0.5 ms on 1 ms ticks: each takes the next tick until it is more than 1.1
        // ticks late, then every other one is dropped (ffmpeg -fps_mode cfr: dup=0 drop=8).
        XCTAssertEqual(fastResult.messages, "velvet: warning: \(fastAVI) holds 1000 frames a second: 0 frame(s) repeated over gaps "
                       + "in the input's timing, 8 dropped\n")
        // Where the input's timing is regular, nothing is repeated or said.
        let regular = scratch.path("regular.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10:duration=2", "-f", "lavfi", "-i", "sine=duration=2",
                         "-c:v", "libx264", "-c:a", "aac", regular])
        let result = try Tool.run(Tool.velvet, ["render", regular, "-o", scratch.path("regular.avi"), "--no-effects"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.messages, "")
        XCTAssertEqual(try Tool.probe(scratch.path("regular.avi"), "stream=nb_frames"), "20")
    }

    /// A webcam's timestamps jitter around its rate: to AVI every frame keeps a tick of its own,
    /// as ffmpeg's `-fps_mode cfr` keeps them (rounding each to its nearest tick dropped 16 of
    /// 60 frames of a 30 fps clip jittering by 5 ms, and repeated others in their place).
    func testJitteryTimestampsLoseNoFrameToAConstantRate() throws {
        let scratch = try Scratch()
        let input = scratch.path("webcam.mkv"), output = scratch.path("webcam.avi")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30:duration=2", "-f", "lavfi", "-i", "sine=r=48000:duration=2.1",
                         "-filter_complex", "[0]settb=1/1000,setpts='PTS+50+5*sin(N*1.7)'[v]", "-map", "[v]", "-map", "1:a",
                         "-c:v", "mjpeg", "-q:v", "3", "-enc_time_base:v", "1/1000", "-fps_mode", "passthrough", "-c:a", "pcm_s16le", input])
        let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--no-effects", "--codec", "ffv1"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.messages.hasSuffix(", 0 dropped\n"), result.messages)
        func distinctFrames(_ path: String) throws -> Int {
            let sums = try Tool.run("ffmpeg", ["-v", "error", "-i", path, "-map", "0:v", "-f", "framemd5", "-"]).stdout
            return Set(sums.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: ",").last }).count
        }
        XCTAssertEqual(try distinctFrames(input), 60)
        XCTAssertEqual(try distinctFrames(output), 60, "every frame of the input is in the output")
    }

    private func gaps(_ times: String) -> [Int] {
        let values = times.split(separator: "\n").compactMap { Double($0) }
        return zip(values.dropFirst(), values).map { Int((($0 - $1) * 1000).rounded()) }
    }
}
