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

    /// Two inputs that would write the same output name are refused before anything runs;
    /// Ctrl-C stops a batch with exit 130, leaving finished outputs and no partial files.
    func testNameClashIsRefusedAndInterruptLeavesNoPartials() throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(atPath: scratch.path("a"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: scratch.path("b"), withIntermediateDirectories: true)
        for folder in ["a", "b"] {
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1", scratch.path("\(folder)/same.png")])
        }
        let clash = try Tool.run(Tool.velvet, ["batch", scratch.path("a/same.png"), scratch.path("b/same.png"),
                                               "--output-dir", scratch.path("out"), "--preset", "none"])
        XCTAssertEqual(clash.status, 2)
        XCTAssertTrue(clash.stderr.contains("same.png") && clash.stderr.contains("rename one"), clash.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.path("out")), "nothing was started")

        let inputs = (1...3).map { scratch.path("clip\($0).mp4") }
        for input in inputs {
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "4", "-c:v", "libx264", "-preset", "ultrafast", input])
        }
        let output = scratch.path("videos")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tool.velvet)
        process.arguments = ["batch"] + inputs + ["--output-dir", output, "--no-effects", "--preset-x264", "ultrafast", "--quiet"]
        process.standardError = Pipe()
        try process.run()
        func files() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: output)) ?? [] }
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline, !files().contains(where: { $0.contains("velvet-partial") }) { usleep(10_000) }
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 130)
        XCTAssertFalse(files().contains { $0.contains("velvet-partial") }, "no partial files: \(files())")
        XCTAssertLessThan(files().count, 3, "the batch stopped early: \(files())")
        for name in files() {
            XCTAssertEqual(try Tool.probe(output + "/" + name, "stream=nb_frames"), "100", "finished outputs are whole: \(name)")
        }
    }
}
