import Foundation
import VelvetTestSupport
import XCTest

/// Bad input: a one-line error, a non-zero exit, and nothing at the output path (nor any
/// partial file beside it).
final class BadInputTests: XCTestCase {
    private func expectFailure(_ arguments: [String], in scratch: Scratch, output: String, mentions: String,
                               environment: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line) throws {
        let before = scratch.files
        let result = try Tool.run(Tool.velvet, arguments, environment: environment)
        XCTAssertNotEqual(result.status, 0, file: file, line: line)
        let lines = result.stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, "one line: \(result.stderr)", file: file, line: line)
        XCTAssertTrue(result.stderr.contains(mentions), "\(result.stderr) should mention \(mentions)", file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output), "nothing at \(output)", file: file, line: line)
        XCTAssertEqual(scratch.files, before, "no partial files left", file: file, line: line)
    }

    func testMissingFile() throws {
        let scratch = try Scratch()
        try expectFailure(["render", scratch.path("nope.mp4"), "-o", scratch.path("out.mp4"), "--no-effects"], in: scratch,
                          output: scratch.path("out.mp4"), mentions: "no such file")
    }

    func testTextFileNamedMP4() throws {
        let scratch = try Scratch()
        try "not a video\n".write(toFile: scratch.path("text.mp4"), atomically: true, encoding: .utf8)
        try expectFailure(["render", scratch.path("text.mp4"), "-o", scratch.path("out.mp4"), "--no-effects"], in: scratch,
                          output: scratch.path("out.mp4"), mentions: "cannot open")
    }

    func testTruncatedMP4() throws {
        let scratch = try Scratch()
        for faststart in [false, true] {
            let whole = scratch.path("whole\(faststart).mp4"), cut = scratch.path("cut\(faststart).mp4")
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "2", "-c:v", "libx264"]
                            + (faststart ? ["-movflags", "+faststart"] : []) + [whole])
            let data = try Data(contentsOf: URL(fileURLWithPath: whole))
            try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: cut))
            try FileManager.default.removeItem(atPath: whole)
            try expectFailure(["render", cut, "-o", scratch.path("out.mp4"), "--no-effects"], in: scratch, output: scratch.path("out.mp4"),
                              mentions: cut)
        }
    }

    /// Cut at a packet boundary with the index at the front, the file ends like a whole one:
    /// only the frame count the container declares shows it is short.
    func testVideoShorterThanItsIndexIsDamaged() throws {
        let scratch = try Scratch()
        let whole = scratch.path("whole.mp4"), cut = scratch.path("cut.mp4"), output = scratch.path("out.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-t", "10", "-c:v", "libx264", "-preset", "ultrafast",
                         "-movflags", "+faststart", whole])
        let positions = try Tool.probe(whole, "packet=pos").split(separator: "\n").compactMap { Int($0) }
        XCTAssertEqual(positions.count, 250)
        let data = try Data(contentsOf: URL(fileURLWithPath: whole))
        try data.prefix(positions[100]).write(to: URL(fileURLWithPath: cut))
        try FileManager.default.removeItem(atPath: whole)
        try expectFailure(["render", cut, "-o", output, "--no-effects"], in: scratch, output: output, mentions: "declares 250 frames")

        let kept = try Tool.run(Tool.velvet, ["render", cut, "-o", output, "--no-effects", "--allow-truncated", "--preset-x264", "ultrafast"])
        XCTAssertEqual(kept.status, 0, kept.stderr)
        let lines = kept.stderr.split(separator: "\n").filter { !$0.hasPrefix("velvet: validation") }
        XCTAssertEqual(lines.count, 1, "one warning line: \(kept.stderr)")
        XCTAssertTrue(kept.stderr.hasPrefix("velvet: warning: \(cut) is damaged or truncated after 100 frame(s)"), kept.stderr)
        XCTAssertEqual(try Tool.probe(output, "stream=nb_frames"), "100")
    }

    /// Velvet encodes h264 and hevc; a container that cannot hold them is refused before decoding.
    func testContainersThatCannotHoldTheVideoAreRefused() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-t", "0.2", "-c:v", "libx264", input])
        for (name, extra, mentions) in [("x.avi", ["--codec", "hevc"], "avi format cannot hold hevc"),
                                        ("x.webm", [], "webm format cannot hold h264"), ("x.gif", [], "gif format cannot hold h264"),
                                        ("x.y4m", [], "yuv4mpegpipe format cannot hold h264"), ("x.exr", [], "OpenEXR holds linear light")] {
            try expectFailure(["render", input, "-o", scratch.path(name), "--no-effects"] + extra, in: scratch, output: scratch.path(name),
                              mentions: mentions)
        }
    }

    func testVideoToStillNeedsAFrameChoice() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.mp4"), output = scratch.path("out.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-frames:v", "12", "-c:v", "libx264", input])
        try expectFailure(["render", input, "-o", output, "--no-effects"], in: scratch, output: output, mentions: "--frame N")
        try expectFailure(["render", input, "-o", output, "--no-effects", "--frame", "12"], in: scratch, output: output,
                          mentions: "--frame 12 is past the end (the input has 12 frame(s))")
    }

    func testSubtitlesTheContainerCannotTakeAreRefused() throws {
        let scratch = try Scratch()
        let subtitles = scratch.path("s.srt"), input = scratch.path("in.mkv"), output = scratch.path("out.avi")
        try "1\n00:00:00,000 --> 00:00:00,500\nHello\n".write(toFile: subtitles, atomically: true, encoding: .utf8)
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-i", subtitles, "-map", "0:v", "-map", "1", "-t", "0.5",
                         "-c:v", "libx264", "-c:s", "srt", input])
        try expectFailure(["render", input, "-o", output, "--no-effects"], in: scratch, output: output,
                          mentions: "input stream #1 (subrip subtitles) cannot go into .avi; write .mkv")
    }

    func testOddSizeForSubsampledChromaIsRefused() throws {
        let scratch = try Scratch()
        let input = scratch.path("odd.png"), output = scratch.path("out.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=162x122", "-vf", "format=rgb24,crop=161:121", "-frames:v", "1", input])
        try expectFailure(["render", input, "-o", output, "--no-effects"], in: scratch, output: output,
                          mentions: "frame size 161x121 cannot be encoded as yuv420p, which needs an even width and height; use --pix-fmt yuv444p")
    }

    func testTruncatedPNGIsDamaged() throws {
        let scratch = try Scratch()
        let whole = scratch.path("whole.png"), cut = scratch.path("cut.png"), output = scratch.path("out.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120", "-frames:v", "1", whole])
        try Data(contentsOf: URL(fileURLWithPath: whole)).prefix(2000).write(to: URL(fileURLWithPath: cut))
        try expectFailure(["render", cut, "-o", output, "--no-effects"], in: scratch, output: output,
                          mentions: "cannot decode \(cut): truncated or damaged image")
    }

    func testFramesBelowTheTrackerMinimumAreRefused() throws {
        let scratch = try Scratch()
        let input = scratch.path("tiny.png"), output = scratch.path("out.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=8x8", "-frames:v", "1", input])
        try expectFailure(["render", input, "-o", output], in: scratch, output: output,
                          mentions: "frame size 8x8 is below the face tracker's minimum of 16x16 px (render it with --no-effects)")
        XCTAssertEqual(try Tool.run(Tool.velvet, ["render", input, "-o", output, "--no-effects"]).status, 0, "no tracker, no minimum")
    }

    func testFramesNeedingMoreMemoryThanTheLimitAreRefused() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.png"), output = scratch.path("out.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=gray:size=2000x2000", "-frames:v", "1", input])
        try expectFailure(["render", input, "-o", output, "--no-effects"], in: scratch, output: output,
                          mentions: "above the limit of 64 MiB; set VELVET_MEMORY_LIMIT=1G to allow it", environment: ["VELVET_MEMORY_LIMIT": "64M"])
        try expectFailure(["render", input, "-o", output, "--no-effects"], in: scratch, output: output,
                          mentions: "VELVET_MEMORY_LIMIT must be a size such as 16G or 512M (or none), got 'lots'",
                          environment: ["VELVET_MEMORY_LIMIT": "lots"])
        // The default (8 GiB at most) refuses the largest frame FFmpeg decodes, before the render decodes it.
        let huge = scratch.path("huge.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=gray:size=16000x16000", "-frames:v", "1", huge])
        try expectFailure(["render", huge, "-o", output, "--no-effects"], in: scratch, output: output,
                          mentions: "frame size 16000x16000 needs about")
        let allowed = scratch.path("allowed.png")
        let raised = try Tool.run(Tool.velvet, ["render", input, "-o", allowed, "--no-effects"], environment: ["VELVET_MEMORY_LIMIT": "1G"])
        XCTAssertEqual(raised.status, 0, raised.stderr)
    }

    func testAudioOnlyFile() throws {
        let scratch = try Scratch()
        try Tool.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440", "-t", "1", "-c:a", "aac", scratch.path("audio.m4a")])
        try expectFailure(["render", scratch.path("audio.m4a"), "-o", scratch.path("out.mp4"), "--no-effects"], in: scratch,
                          output: scratch.path("out.mp4"), mentions: "no video stream")
    }

    func testAbsurdDimensions() throws {
        let scratch = try Scratch()
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=size=16400x8", "-frames:v", "1", scratch.path("wide.png")])
        try expectFailure(["render", scratch.path("wide.png"), "-o", scratch.path("out.png"), "--no-effects"], in: scratch,
                          output: scratch.path("out.png"), mentions: "16384")
    }

    func testUnwritableOutputDirectory() throws {
        let scratch = try Scratch()
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x64", "-frames:v", "1", scratch.path("in.png")])
        // A missing directory, and one that refuses files even to root.
        try expectFailure(["render", scratch.path("in.png"), "-o", scratch.path("missing/out.png"), "--no-effects"], in: scratch,
                          output: scratch.path("missing/out.png"), mentions: "does not exist")
        try expectFailure(["render", scratch.path("in.png"), "-o", "/proc/velvet-out.png", "--no-effects"], in: scratch,
                          output: "/proc/velvet-out.png", mentions: "/proc/velvet-out.png")
    }

    func testDiskFullLeavesNothingBehind() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.mp4"), mountPoint = scratch.path("small")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "2", "-c:v", "libx264", input])
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        // A 40 KiB tmpfs fills up long before the render ends (needs root, as in CI).
        let mount = try Tool.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=40k", "tmpfs", mountPoint])
        guard mount.status == 0 else { return XCTFail("cannot mount a small tmpfs (run the tests as root): \(mount.stderr)") }
        defer { _ = try? Tool.run("/usr/bin/umount", [mountPoint]) }
        let output = mountPoint + "/out.mp4"
        let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--no-effects"])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("No space left on device"), result.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: mountPoint), [], "no partial file left")
    }

    func testOutputEqualToInput() throws {
        let scratch = try Scratch()
        let path = scratch.path("in.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x64", "-frames:v", "1", path])
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let result = try Tool.run(Tool.velvet, ["render", path, "-o", scratch.url.path + "/./in.png", "--no-effects"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("overwrite the input"), result.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
    }

    func testUsageErrorsExitTwo() throws {
        for arguments in [["render"], ["render", "a.mp4", "--no-effects"], ["render", "a.mp4", "-o", "b.mp4", "--crf", "99", "--no-effects"], ["frobnicate"],
                          ["render", "a.mp4", "-o", "b.mp4", "--codec", "vp8", "--no-effects"]] {
            let result = try Tool.run(Tool.velvet, arguments)
            XCTAssertEqual(result.status, 2, "\(arguments): \(result.stderr)")
        }
    }

    func testInterruptRemovesPartialOutputAndExits130() throws {
        let scratch = try Scratch()
        let input = scratch.path("long.mp4"), output = scratch.path("out.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25", "-t", "20", "-c:v", "libx264", "-preset", "ultrafast", input])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tool.velvet)
        process.arguments = ["render", input, "-o", output, "--preset-x264", "ultrafast", "--quiet", "--no-effects"]
        process.standardError = Pipe()
        try process.run()
        // Wait until the render is writing (its partial file exists), then interrupt.
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !scratch.files.contains(where: { $0.contains("velvet-partial") }) { usleep(20_000) }
        XCTAssertTrue(scratch.files.contains { $0.contains("velvet-partial") }, "the render never started writing")
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 130)
        XCTAssertEqual(scratch.files, ["long.mp4"], "partial output removed")
    }
}
