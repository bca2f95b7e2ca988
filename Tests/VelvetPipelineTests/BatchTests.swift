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
            seen += try FileManager.default.contentsOfDirectory(atPath: output).filter { !$0.hasPrefix(".") }
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

        func modified(_ name: String) throws -> Date? {
            try FileManager.default.attributesOfItem(atPath: output + "/" + name)[.modificationDate] as? Date
        }
        let finishedBefore = try modified("clip1.mp4")
        // Stale too: a killed commit's half-written record (of a finished output: it was never
        // removed), and a dead writer's partial whose PID a live velvet process now has (it holds
        // no lock and has the file open nowhere; its input was refused as being written).
        let waiting = Process()
        waiting.executableURL = URL(fileURLWithPath: Tool.velvet)
        waiting.arguments = ["render", "-", "-o", scratch.path("waiting.mkv"), "--no-effects", "--quiet"]
        let input = Pipe()
        (waiting.standardInput, waiting.standardError) = (input, Pipe())
        try waiting.run()
        defer { waiting.terminate(); waiting.waitUntilExit() }
        XCTAssertTrue(FileManager.default.createFile(atPath: output + "/..clip1.mp4.velvet-done.velvet-partial-999999", contents: Data("{}".utf8)))
        XCTAssertTrue(FileManager.default.createFile(atPath: output + "/.clip4.mp4.velvet-partial-\(waiting.processIdentifier)", contents: Data()))
        let resumed = try Tool.run(Tool.velvet, arguments)
        XCTAssertEqual(resumed.status, 0, resumed.stderr)
        XCTAssertEqual(try modified("clip1.mp4"), finishedBefore, "the finished output is skipped, not rendered again")
        XCTAssertEqual(files().filter { !$0.contains("velvet-done") }.sorted(), ["clip1.mp4", "clip2.mp4", "clip3.mp4", "clip4.mp4"],
                       "no partial files left")
        XCTAssertEqual(files().filter { $0.hasSuffix(".velvet-done") }.count, 4, "a record of each finished output")
        XCTAssertEqual(files().filter { $0.contains("velvet-partial") }, [], "no partial of a record left")
        for name in files() where !name.hasPrefix(".") {
            XCTAssertEqual(try Tool.probe(output + "/" + name, "stream=nb_frames"), "50", name)
        }
    }

    /// Two inputs that would write the same output name are refused before anything runs, and
    /// so is an output folder that would put an output over its input.
    func testNameClashAndOutputOverInputAreRefused() throws {
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

        let original = try Data(contentsOf: URL(fileURLWithPath: scratch.path("a/same.png")))
        let overInput = try Tool.run(Tool.velvet, ["batch", scratch.path("a/same.png"), "--output-dir", scratch.path("a"), "--preset", "none"])
        XCTAssertEqual(overInput.status, 2, overInput.stderr)
        XCTAssertEqual(overInput.stderr.split(separator: "\n").count, 1, overInput.stderr)
        XCTAssertTrue(overInput.stderr.contains("would be overwritten"), overInput.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: scratch.path("a/same.png"))), original)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path("a")), ["same.png"])
    }

    /// An input replaced while it is rendered: the record describes what was read (taken
    /// before the render), so the next run renders the new input instead of skipping it.
    func testAnInputReplacedDuringItsRenderIsRenderedAgain() throws {
        let scratch = try Scratch()
        let input = scratch.path("a.mp4"), replacement = scratch.path("new.mp4"), output = scratch.path("out")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25", "-t", "12", "-c:v", "libx264", "-preset", "ultrafast", input])
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "1", "-c:v", "libx264", "-preset", "ultrafast", replacement])
        let arguments = ["batch", input, "--output-dir", output, "--no-effects", "--preset-x264", "ultrafast"]
        let batch = try Tool.start(Tool.velvet, arguments)
        XCTAssertTrue(Tool.waitUntil(seconds: 60) {
            ((try? FileManager.default.contentsOfDirectory(atPath: output)) ?? []).contains { $0.contains("velvet-partial") }
        })
        XCTAssertEqual(rename(replacement, input), 0)
        XCTAssertEqual(batch.wait().status, 0)
        let rerun = try Tool.run(Tool.velvet, arguments)
        XCTAssertEqual(rerun.status, 0, rerun.stderr)
        XCTAssertTrue(rerun.stderr.contains("velvet batch: rendered"), rerun.stderr)
        XCTAssertEqual(try Tool.probe(output + "/a.mp4", "stream=nb_frames"), "25", "the new input's render")
    }

    /// INT, TERM, HUP and QUIT alike stop a batch at once with 128+N: finished outputs are
    /// kept (whole), the unfinished one is removed, no more are started; a rerun completes.
    func testSignalsStopABatchKeepingFinishedOutputs() throws {
        let scratch = try Scratch()
        let inputs = (1...4).map { scratch.path("clip\($0).mp4") }
        for input in inputs {
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "2", "-c:v", "libx264", "-preset", "ultrafast", input])
        }
        let output = scratch.path("videos")
        let arguments = ["batch"] + inputs + ["--output-dir", output, "--no-effects", "--preset-x264", "ultrafast", "--quiet"]
        func files() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: output)) ?? [] }
        func finished() -> [String] { files().filter { !$0.hasPrefix(".") } }
        for (index, (signal, name)) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP"), (SIGQUIT, "SIGQUIT")].enumerated() {
            let before = finished().count
            let batch = try Tool.start(Tool.velvet, arguments)
            // The first time, once an output is finished and the next is being written.
            XCTAssertTrue(Tool.waitUntil { (index > 0 || !finished().isEmpty) && files().contains { $0.contains("velvet-partial") } },
                          "\(name): \(files())")
            let result = batch.stop(with: signal)
            XCTAssertEqual(result.status, 128 + signal, "\(name): \(result.stderr)")
            XCTAssertEqual(result.stderr, "velvet: interrupted (\(name)); unfinished output removed\n")
            XCTAssertFalse(files().contains { $0.contains("velvet-partial") }, "\(name): no partial files: \(files())")
            XCTAssertGreaterThanOrEqual(finished().count, max(before, 1), "\(name): finished outputs kept")
            XCTAssertLessThan(finished().count, 4, "\(name): the batch stopped early: \(files())")
            for file in finished() {
                XCTAssertEqual(try Tool.probe(output + "/" + file, "stream=nb_frames"), "50", "\(name): finished outputs are whole: \(file)")
            }
        }
        let rerun = try Tool.run(Tool.velvet, arguments)
        XCTAssertEqual(rerun.status, 0, rerun.stderr)
        XCTAssertEqual(finished().sorted(), ["clip1.mp4", "clip2.mp4", "clip3.mp4", "clip4.mp4"])
    }

    /// A --list with CRLF line ends, a byte-order mark and no final newline is read line by line.
    func testListWithCRLFByteOrderMarkAndNoFinalNewline() throws {
        let scratch = try Scratch()
        let names = ["p1.png", "p2.png", "p3.png"]
        for name in names { try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1", scratch.path(name)]) }
        let text = "\u{FEFF}# inputs\r\n" + names.map { scratch.path($0) }.joined(separator: "\r\n") + "\r\n\r\n" + scratch.path(names[0])
        try text.write(toFile: scratch.path("list.txt"), atomically: true, encoding: .utf8)
        let result = try Tool.run(Tool.velvet, ["batch", "--list", scratch.path("list.txt"), "--output-dir", scratch.path("out"),
                                                "--preset", "none", "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path("out")).filter { !$0.hasPrefix(".") }.sorted(), names)

        // A line that is not UTF-8 (a Latin-1 name) is refused, naming the line, before any work.
        var latin1 = Data((scratch.path(names[0]) + "\n").utf8)
        latin1 += Data(scratch.path("caf").utf8) + Data([0xE9]) + Data(".png\n".utf8)
        try latin1.write(to: URL(fileURLWithPath: scratch.path("latin1.txt")))
        let refused = try Tool.run(Tool.velvet, ["batch", "--list", scratch.path("latin1.txt"), "--output-dir", scratch.path("out2"),
                                                 "--preset", "none", "--quiet"])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertEqual(refused.stderr, "velvet: error: cannot open \(scratch.path("latin1.txt")): line 2 is not UTF-8 text "
                       + "(velvet takes UTF-8 file names)\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.path("out2")))
    }

    /// One file named twice (`x.png`, `./x.png`) is one input; two files whose names differ
    /// only in their Unicode form (é composed, e + combining accent) are two inputs and two
    /// outputs, though Swift's == takes the names for one string; a list may be a FIFO.
    func testInputsAreFilesNotSpellings() throws {
        let scratch = try Scratch()
        let composed = scratch.path("caf\u{E9}.png"), decomposed = scratch.path("cafe\u{301}.png")
        XCTAssertEqual(composed, decomposed, "Swift compares the two names as equal")
        for name in [composed, decomposed] { try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1", name]) }
        XCTAssertEqual(scratch.files.count, 2, "the file system holds two files")
        let twice = try Tool.run(Tool.velvet, ["batch", composed, scratch.url.path + "/./caf\u{E9}.png", decomposed,
                                               "--output-dir", scratch.path("out"), "--preset", "none"])
        XCTAssertEqual(twice.status, 0, twice.stderr)
        XCTAssertTrue(twice.stdout.contains("batch: 2 of 2 input(s)"), twice.stdout)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path("out")).filter { !$0.hasPrefix(".") }.count, 2)

        let fifo = scratch.path("list.fifo")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let feeder = Thread { try? Data((composed + "\n").utf8).write(to: URL(fileURLWithPath: fifo)) }
        feeder.start()
        let listed = try Tool.run(Tool.velvet, ["batch", "--list", fifo, "--output-dir", scratch.path("fifo-out"), "--preset", "none", "--quiet"])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path("fifo-out")).filter { !$0.hasPrefix(".") }.count, 1)
    }

    /// An output counts as finished only when its record matches the input, the settings and
    /// the output itself: a 0-byte or foreign file in the way is refused (not skipped), a
    /// settings or input change re-renders, `-n` never replaces, `-y` re-renders everything.
    func testOnlyProvablyFinishedOutputsAreSkipped() throws {
        let scratch = try Scratch()
        let inputs = ["a.png", "b.png"].map { scratch.path($0) }
        for input in inputs { try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1", input]) }
        let output = scratch.path("out")
        func batch(_ extra: [String]) throws -> Tool.Result {
            try Tool.run(Tool.velvet, ["batch"] + inputs + ["--output-dir", output, "--preset", "none"] + extra)
        }
        func lines(_ result: Tool.Result, _ word: String) -> Int { result.stderr.split(separator: "\n").filter { $0.contains(word) }.count }

        let first = try batch([])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(lines(first, "rendered"), 2)
        XCTAssertEqual(lines(try batch([]), "skipped"), 2, "finished outputs are skipped")
        XCTAssertEqual(lines(try batch(["--sharpen", "0.5"]), "rendered"), 2, "other settings re-render")
        XCTAssertEqual(lines(try batch(["--sharpen", "0.5"]), "skipped"), 2)
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48", "-vf", "negate", "-frames:v", "1", inputs[0]])
        let changed = try batch(["--sharpen", "0.5", "-n"])
        XCTAssertEqual(changed.status, 1, "-n never replaces: \(changed.stderr)")
        XCTAssertTrue(changed.stderr.contains("a.png exists (use -y to overwrite)"), changed.stderr)
        XCTAssertEqual(lines(try batch(["--sharpen", "0.5"]), "rendered"), 1, "a changed input re-renders")

        try Data().write(to: URL(fileURLWithPath: output + "/b.png"))
        let empty = try batch(["--sharpen", "0.5"])
        XCTAssertEqual(empty.status, 1, empty.stderr)
        XCTAssertTrue(empty.stderr.contains("failed \(inputs[1]): \(output)/b.png exists (use -y to overwrite)"), empty.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: output + "/b.png")).count, 0, "a file it cannot prove it wrote is left alone")
        let forced = try batch(["--sharpen", "0.5", "-y"])
        XCTAssertEqual(forced.status, 0, forced.stderr)
        XCTAssertEqual(lines(forced, "rendered"), 2, "-y re-renders all")
        XCTAssertEqual(try Tool.pixels(output + "/b.png", "rgb24").count, 64 * 48 * 3)
    }

    /// With VELVET_VALIDATION=1 a batch fails when the layer reported anything (here the
    /// layer's best-practices checks, turned on from outside, report on every render).
    func testValidationMessagesFailTheBatch() throws {
        let scratch = try Scratch()
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1", scratch.path("in.png")])
        let arguments = ["batch", scratch.path("in.png"), "--output-dir", scratch.path("out"), "--no-effects", "--quiet"]
        let clean = try Tool.run(Tool.velvet, arguments, environment: ["VELVET_VALIDATION": "1"])
        XCTAssertEqual(clean.status, 0, clean.stderr)
        XCTAssertTrue(clean.stderr.contains("validation layer on, 0 message(s)"), clean.stderr)
        let noisy = try Tool.run(Tool.velvet, arguments + ["-y"], environment: [
            "VELVET_VALIDATION": "1", "VK_LAYER_ENABLES": "VK_VALIDATION_FEATURE_ENABLE_BEST_PRACTICES_EXT"])
        XCTAssertEqual(noisy.status, 1)
        XCTAssertTrue(noisy.stderr.contains("the Vulkan validation layer reported"), noisy.stderr)
    }

    /// Two workers on the one lavapipe device (`--devices 0,0`) share the queue: every output
    /// once, each with all its frames.
    func testTwoWorkersOnOneDevice() throws {
        let scratch = try Scratch()
        let inputs = (1...4).map { scratch.path("clip\($0).mp4") }
        for (index, input) in inputs.enumerated() {
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-frames:v", "\(5 + index)", "-c:v", "libx264",
                             "-preset", "ultrafast", input])
        }
        let output = scratch.path("out")
        let result = try Tool.run(Tool.velvet, ["batch"] + inputs + ["--output-dir", output, "--devices", "0,0", "--no-effects",
                                                                     "--preset-x264", "ultrafast"], environment: ["VELVET_VALIDATION": "1"])
        XCTAssertEqual(result.status, 0, result.stderr)
        for (index, input) in inputs.enumerated() {
            XCTAssertEqual(result.stderr.components(separatedBy: "rendered \(input) ").count - 1, 1, "\(input) once: \(result.stderr)")
            XCTAssertEqual(try Tool.probe(output + "/clip\(index + 1).mp4", "stream=nb_frames"), "\(5 + index)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output).filter { !$0.hasPrefix(".") }.count, 4)
        XCTAssertEqual(try Tool.run(Tool.velvet, ["batch", inputs[0], "--output-dir", output, "--devices", "0,7"]).status, 2,
                       "a device that does not exist is a usage error before any work")
        XCTAssertEqual(try Tool.run(Tool.velvet, ["batch", inputs[0], "--output-dir", output, "--devices", ","]).status, 2,
                       "a device list of nothing is a usage error")
        XCTAssertEqual(try Tool.run(Tool.velvet, ["batch", inputs[0], "--output-dir", output], environment: ["VELVET_DEVICE": ",,"]).status, 2,
                       "so is VELVET_DEVICE naming nothing")
        for list in [",0", "0,", "0,,0"] {
            XCTAssertEqual(try Tool.run(Tool.velvet, ["batch", inputs[0], "--output-dir", output, "--devices", list]).status, 2,
                           "an empty entry in '\(list)' is a typo")
        }
    }

    /// `--output-dir` naming a regular file: one clean line, not a Foundation error dump.
    /// A batch record is the batch's own file: a link at its name (to the batch's input, even)
    /// is replaced, never written through, and a FIFO there neither hangs the batch nor is opened.
    func testRecordsReplaceLinksAndFIFOsAtTheirNames() throws {
        let scratch = try Scratch()
        let input = scratch.path("in/k.png"), output = scratch.path("out")
        try FileManager.default.createDirectory(atPath: scratch.path("in"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1", input])
        let original = try Data(contentsOf: URL(fileURLWithPath: input))
        try FileManager.default.createSymbolicLink(atPath: output + "/.k.png.velvet-done", withDestinationPath: "../in/k.png")
        let linked = try Tool.run(Tool.velvet, ["batch", input, "--output-dir", output, "--no-effects", "--quiet"])
        XCTAssertEqual(linked.status, 0, linked.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: input)), original, "the input is untouched")
        let record = try FileManager.default.attributesOfItem(atPath: output + "/.k.png.velvet-done")
        XCTAssertEqual(record[.type] as? FileAttributeType, .typeRegular, "the link was replaced by the record")

        try FileManager.default.removeItem(atPath: output + "/k.png")
        try FileManager.default.removeItem(atPath: output + "/.k.png.velvet-done")
        XCTAssertEqual(mkfifo(output + "/.k.png.velvet-done", 0o600), 0)
        let fifo = try Tool.run("timeout", ["60", Tool.velvet, "batch", input, "--output-dir", output, "--no-effects", "--quiet"])
        XCTAssertEqual(fifo.status, 0, "finished, not hung: \(fifo.stderr)")
        let replaced = try FileManager.default.attributesOfItem(atPath: output + "/.k.png.velvet-done")
        XCTAssertEqual(replaced[.type] as? FileAttributeType, .typeRegular)
    }

    func testOutputDirThatIsAFileIsOneCleanLine() throws {
        let scratch = try Scratch()
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1", scratch.path("in.png")])
        try Data("x".utf8).write(to: URL(fileURLWithPath: scratch.path("file")))
        let result = try Tool.run(Tool.velvet, ["batch", scratch.path("in.png"), "--output-dir", scratch.path("file"), "--no-effects"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderr, "velvet: error: cannot write \(scratch.path("file")): it exists and is not a directory\n")
    }

    /// `--format` is the videos' container: a picture keeps its own, as it keeps its extension
    /// (Matroska, WebM, GIF... were written into a.png and recorded as done).
    func testFormatIsTheVideosAndPicturesKeepTheirs() throws {
        let scratch = try Scratch()
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1", scratch.path("a.png")])
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10", "-frames:v", "3", "-c:v", "libx264", scratch.path("c.mp4")])
        let result = try Tool.run(Tool.velvet, ["batch", scratch.path("a.png"), scratch.path("c.mp4"), "--output-dir", scratch.path("out"),
                                                "--format", "matroska", "--no-effects", "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try Tool.probe(scratch.path("out/a.png"), "format=format_name"), "png_pipe")
        XCTAssertTrue(try Tool.probe(scratch.path("out/c.mkv"), "format=format_name").contains("matroska"))
    }

    /// A worker that cannot start (a LUT no worker can read) leaves its inputs unrendered: each
    /// is a failure of its own, counted and named (the count was the workers').
    func testInputsNoWorkerRenderedAreEachAFailure() throws {
        let scratch = try Scratch()
        let inputs = ["a", "b", "c"].map { scratch.path("\($0).png") }
        for input in inputs { try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1", input]) }
        for devices in ["0", "0,0"] {
            let result = try Tool.run(Tool.velvet, ["batch"] + inputs + ["--output-dir", scratch.path("out"), "--devices", devices,
                                                                         "--lut", scratch.path("nosuch.cube")])
            XCTAssertEqual(result.status, 1, result.stderr)
            XCTAssertTrue(result.stdout.contains("3 of 3 input(s) in shard 0/1: 3 failed"), "\(devices): \(result.stdout)")
            for input in inputs { XCTAssertTrue(result.stderr.contains("failed \(input): not rendered: worker on device"), result.stderr) }
        }
    }

    /// The list file is an input: no output may replace it, -y or not; an input that is a folder
    /// says so (it said "no such file").
    func testTheListIsAnInputAndAFolderIsNoFile() throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: true)
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1", scratch.path("a.png")])
        let list = scratch.path("out/a.png")
        try Data((scratch.path("a.png") + "\n").utf8).write(to: URL(fileURLWithPath: list))
        let result = try Tool.run(Tool.velvet, ["batch", "--list", list, "--output-dir", scratch.path("out"), "--no-effects", "-y"])
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("input list"), result.stderr)
        XCTAssertEqual(try String(contentsOfFile: list, encoding: .utf8), scratch.path("a.png") + "\n", "the list is untouched")

        try FileManager.default.createDirectory(atPath: scratch.path("folder.mp4"), withIntermediateDirectories: true)
        let folder = try Tool.run(Tool.velvet, ["batch", scratch.path("folder.mp4"), "--output-dir", scratch.path("out2"), "--no-effects"])
        XCTAssertEqual(folder.status, 1, folder.stderr)
        XCTAssertTrue(folder.stderr.contains("is a directory"), folder.stderr)
    }
}
