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
    }

    private func gaps(_ times: String) -> [Int] {
        let values = times.split(separator: "\n").compactMap { Double($0) }
        return zip(values.dropFirst(), values).map { Int((($0 - $1) * 1000).rounded()) }
    }
}
