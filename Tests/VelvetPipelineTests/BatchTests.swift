import Foundation
import VelvetTestSupport
import XCTest

/// `velvet batch`: shards split a list exactly, and a killed batch resumes to complete,
/// valid outputs.
final class BatchTests: XCTestCase {
    private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func testShardsTakeEveryFileExactlyOnce() throws {
        let scratch = try Scratch()
        let names = (1...7).map { "p\($0).png" }
        for name in names {
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1", scratch.path(name)])
        }
        try names.map { scratch.path($0) }.joined(separator: "\n").write(toFile: scratch.path("list.txt"), atomically: true, encoding: .utf8)
        var seen: [String] = []
        for index in 0..<3 {
            let output = scratch.path("shard\(index)")
            let result = try Tool.run(Tool.velvet, ["batch", "--list", scratch.path("list.txt"), "--output-dir", output,
                                                    "--shard", "\(index)/3", "--preset", "none", "--quiet"])
            XCTAssertEqual(result.status, 0, result.stderr)
            seen += try FileManager.default.contentsOfDirectory(atPath: output)
        }
        XCTAssertEqual(seen.sorted(), names.sorted(), "every file once across the shards")
        XCTAssertEqual(try Tool.run(Tool.velvet, ["batch", scratch.path("p1.png"), "--output-dir", scratch.path("x"), "--shard", "3/3"]).status, 2)
    }

    func testKilledBatchResumesToCompleteOutputs() throws {
        let scratch = try Scratch()
        let inputs = (1...4).map { scratch.path("clip\($0).mp4") }
        for input in inputs {
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "2", "-c:v", "libx264", "-preset", "ultrafast", input])
        }
        let output = scratch.path("out")
        let arguments = ["batch"] + inputs + ["--output-dir", output, "--no-effects", "--preset-x264", "ultrafast", "--quiet"]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tool.velvet)
        process.arguments = arguments
        process.standardError = Pipe()
        try process.run()
        // Kill it once the first output is in place and the second is being written.
        let deadline = Date().addingTimeInterval(120)
        func files() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: output)) ?? [] }
        while Date() < deadline, !(files().contains("clip1.mp4") && files().contains { $0.contains("velvet-partial") }) { usleep(10_000) }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTAssertTrue(files().contains { $0.contains("velvet-partial") }, "the kill left a partial file: \(files())")
        XCTAssertLessThan(files().filter { $0.hasSuffix(".mp4") && !$0.hasPrefix(".") }.count, 4)

        let resumed = try Tool.run(Tool.velvet, arguments)
        XCTAssertEqual(resumed.status, 0, resumed.stderr)
        XCTAssertEqual(files().sorted(), ["clip1.mp4", "clip2.mp4", "clip3.mp4", "clip4.mp4"], "no partial files left")
        for name in files() {
            XCTAssertEqual(try Tool.probe(output + "/" + name, "stream=nb_frames"), "50", name)
        }
    }
}
