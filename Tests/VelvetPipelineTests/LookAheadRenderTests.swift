import Foundation
import VelvetFace
import VelvetPipeline
import VelvetTestSupport
import XCTest

/// `velvet render --look-ahead K` end to end: the frames held for the look-ahead change
/// which landmarks a frame gets, never which frames come out, when, or in what order, nor
/// the audio; the memory they took is reported.
final class LookAheadRenderTests: XCTestCase {
    private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    private static let size = (width: 256, height: 300)

    @discardableResult
    private func velvet(_ arguments: [String], status: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) throws -> Tool.Result {
        let result = try Tool.run(Tool.velvet, arguments + ["--quiet"],
                                  environment: ["VELVET_VALIDATION": "1", "VELVET_MODELS_DIR": repository.appendingPathComponent("models").path])
        XCTAssertEqual(result.status, status, "velvet \(arguments.joined(separator: " ")): \(result.stderr)", file: file, line: line)
        return result
    }

    private func lookAheadReport(_ result: Tool.Result) throws -> [String: Int] {
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        return try XCTUnwrap(report["look_ahead"] as? [String: Int])
    }

    /// 20 frames of the photo under fresh noise (the mesh jitters, so the smoothing shows),
    /// with FLAC audio, in Matroska: rendered with the default look-ahead, with 3, and with
    /// none, every output has the input's frames at the input's times and the input's audio.
    func testLookAheadKeepsFramesTimesAndAudio() throws {
        let scratch = try Scratch()
        let clip = scratch.path("clip.mkv")
        try Tool.ffmpeg(["-loop", "1", "-framerate", "25", "-t", "0.8", "-i", repository.appendingPathComponent("test-assets/grace_hopper.jpg").path,
                         "-f", "lavfi", "-i", "sine=frequency=440:duration=0.8",
                         "-vf", "scale=\(Self.size.width):\(Self.size.height),setsar=1,noise=alls=6:allf=t,format=yuv420p",
                         "-c:v", "libx264", "-crf", "10", "-preset", "ultrafast", "-c:a", "flac", clip])
        let times = try Tool.probe(clip, "packet=pts_time")
        XCTAssertEqual(times.split(separator: "\n").count, 20)
        var outputs: [Int: String] = [:]
        for (flag, expected) in [(nil, LookAheadTracker.standardFrames), (3, 3), (0, 0)] as [(Int?, Int)] {
            let output = scratch.path("out-\(expected).mkv")
            let result = try velvet(["render", clip, "-o", output, "--crf", "0", "--preset-x264", "ultrafast", "--json"]
                                    + (flag.map { ["--look-ahead", "\($0)"] } ?? []))
            let report = try lookAheadReport(result)
            XCTAssertEqual(report["frames"], expected)
            XCTAssertEqual(report["skin_lead"], expected == 0 ? 0 : BeautyEffect.frontLead)
            // The frames held: K + 2 + 3 decoded yuv420p frames at once (frames up to N + K + 2 + 2 are looked at while
            // N is recorded: the skin fronts run 2 frames ahead of the blends).
            XCTAssertEqual(report["held_bytes_peak"],
                           expected == 0 ? 0 : (expected + BeautyEffect.frontLead + 3) * Self.size.width * Self.size.height * 3 / 2)
            XCTAssertEqual(try Tool.probe(output, "packet=pts_time"), times, "look-ahead \(expected): the input's frames at its times")
            XCTAssertEqual(try Tool.streamMD5(output, "a:0"), try Tool.streamMD5(clip, "a:0"), "look-ahead \(expected): the audio")
            outputs[expected] = try Tool.frameMD5s(output)
        }
        XCTAssertNotEqual(outputs[LookAheadTracker.standardFrames], outputs[0], "the look-ahead changes the landmarks")
    }

    /// A bad --look-ahead is a usage error (exit 2) before any work; a still ignores it.
    func testLookAheadOptionIsChecked() throws {
        let scratch = try Scratch()
        for bad in ["-1", "31", "x"] {
            let result = try velvet(["render", "in.mp4", "-o", scratch.path("out.mp4"), "--look-ahead", bad], status: 2)
            XCTAssertTrue(result.stderr.contains("--look-ahead"), result.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.path("out.mp4")))
        let still = scratch.path("grace.png")
        try Tool.ffmpeg(["-i", repository.appendingPathComponent("test-assets/grace_hopper.jpg").path, "-vf", "scale=256:300", still])
        let report = try lookAheadReport(try velvet(["render", still, "-o", scratch.path("out.png"), "--look-ahead", "6", "--json"]))
        XCTAssertEqual(report["frames"], 0, "a still is rendered frame by frame")
    }
}
