import Foundation
import VelvetTestSupport
import XCTest

/// Image sequences named as ffmpeg names them (`img%03d.png`): read as a video at image2's
/// 25 frames a second, from the first of numbers 0-4 to the last before a gap.
final class ImageSequenceTests: XCTestCase {
    private func makeSequence(in scratch: Scratch, frames: Int = 5) throws -> String {
        try FileManager.default.createDirectory(atPath: scratch.path("seq"), withIntermediateDirectories: true)
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64:rate=25", "-frames:v", "\(frames)", scratch.path("seq/img%03d.png")])
        return scratch.path("seq/img%03d.png")
    }

    /// Every file becomes a frame, in order, losslessly (FFV1), at 25 fps; `--frame N` takes the
    /// sequence's Nth file.
    func testSequenceIsReadAsAVideo() throws {
        let scratch = try Scratch()
        let pattern = try makeSequence(in: scratch)
        let video = scratch.path("out.mkv")
        let result = try Tool.run(Tool.velvet, ["render", pattern, "-o", video, "--no-effects", "--codec", "ffv1", "--pix-fmt", "bgr0", "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try Tool.probe(video, "stream=r_frame_rate"), "25/1")
        let frames = try Tool.run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", video, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]).output
        var expected = Data()
        for number in 1...5 { expected += try Tool.pixels(scratch.path(String(format: "seq/img%03d.png", number)), "rgb24") }
        XCTAssertEqual(frames.count, expected.count, "five frames")
        XCTAssertEqual(frames, expected)

        let still = scratch.path("third.png")
        XCTAssertEqual(try Tool.run(Tool.velvet, ["render", pattern, "-o", still, "--frame", "2", "--no-effects", "--quiet"]).status, 0)
        XCTAssertEqual(try Tool.pixels(still, "rgb24"), try Tool.pixels(scratch.path("seq/img003.png"), "rgb24"))
    }

    /// No output may be one of the sequence's files; a sequence with no frame is "no such file";
    /// batch takes files, not sequences; a file whose very name holds `%03d` is that file.
    func testSequenceRefusals() throws {
        let scratch = try Scratch()
        let pattern = try makeSequence(in: scratch, frames: 3)
        let original = try Data(contentsOf: URL(fileURLWithPath: scratch.path("seq/img002.png")))
        let overwrite = try Tool.run(Tool.velvet, ["render", pattern, "-o", scratch.path("seq/img002.png"), "-y", "--no-effects"])
        XCTAssertEqual(overwrite.status, 2, overwrite.stderr)
        XCTAssertTrue(overwrite.stderr.contains("a frame of the input sequence"), overwrite.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: scratch.path("seq/img002.png"))), original)

        let missing = try Tool.run(Tool.velvet, ["render", scratch.path("seq/none%03d.png"), "-o", scratch.path("x.mp4"), "--no-effects"])
        XCTAssertEqual(missing.status, 1, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("no such file (an image sequence: no frame numbered 0 to 4)"), missing.stderr)

        let batch = try Tool.run(Tool.velvet, ["batch", pattern, "--output-dir", scratch.path("out")])
        XCTAssertEqual(batch.status, 2, batch.stderr)
        XCTAssertTrue(batch.stderr.contains("is an image sequence"), batch.stderr)

        let literal = scratch.path("seq/lit%03d.png")
        try FileManager.default.copyItem(atPath: scratch.path("seq/img001.png"), toPath: literal)
        let single = scratch.path("single.png")
        XCTAssertEqual(try Tool.run(Tool.velvet, ["render", literal, "-o", single, "--no-effects", "--quiet"]).status, 0)
        XCTAssertEqual(try Tool.pixels(single, "rgb24"), try Tool.pixels(scratch.path("seq/img001.png"), "rgb24"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.path("out")))
    }
}
