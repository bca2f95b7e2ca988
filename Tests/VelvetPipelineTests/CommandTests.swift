import Foundation
import VelvetBeauty
import VelvetTestSupport
import XCTest

/// The commands without a render of their own: `analyze`, `devices`, `version`, `help` and
/// short, bounded runs of every `bench` subcommand, each checked for the fields docs/CLI.md
/// lists; usage errors of every command.
final class CommandTests: XCTestCase {
    private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    private var photo: String { repository.appendingPathComponent("test-assets/grace_hopper.jpg").path }

    private func velvet(_ arguments: [String], status: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) throws -> Tool.Result {
        let result = try Tool.run(Tool.velvet, arguments, environment: ["VELVET_VALIDATION": "1",
                                                                        "VELVET_MODELS_DIR": repository.appendingPathComponent("models").path])
        XCTAssertEqual(result.status, status, "velvet \(arguments.joined(separator: " ")): \(result.stderr)", file: file, line: line)
        return result
    }

    private func json(_ result: Tool.Result, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let text = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], result.stdout, file: file, line: line)
    }

    private func assertKeys(_ object: [String: Any], _ keys: [String], file: StaticString = #filePath, line: UInt = #line) {
        for key in keys { XCTAssertNotNil(object[key], "\(key) in \(object.keys.sorted())", file: file, line: line) }
    }

    /// ffmpeg's test pattern has no face: the turned search (run because nothing was found
    /// upright) keeps only faces of the policy's minimum size, not a 9-px pattern at the models' reach.
    func testTestPatternHasNoFace() throws {
        let scratch = try Scratch()
        let input = scratch.path("pattern.mp4") // as x264 codes it (the still PNG never showed the "face")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-frames:v", "3", "-c:v", "libx264", "-preset", "ultrafast", input])
        let frames = try XCTUnwrap(try json(try velvet(["analyze", input, "--json"]))["frames"] as? [[String: Any]])
        XCTAssertEqual(frames.map { ($0["faces"] as? [Any])?.count ?? -1 }, [0, 0, 0])
    }

    /// analyze takes every video render takes: its scratch render encodes 4:4:4, which takes
    /// odd sizes and any input format (4:2:0 refused them, naming an internal file and
    /// pointing to an option analyze does not have).
    func testAnalyzeTakesOddSizesAndFormats() throws {
        let scratch = try Scratch()
        for (name, size, format) in [("odd420", "161:121", "yuv420p"), ("odd422", "161:121", "yuv422p"), ("deep", "160:119", "yuv420p10le"),
                                     ("rgb", "161:121", "bgr0")] {
            let input = scratch.path("\(name).mkv")
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=162x122:rate=10", "-frames:v", "3", "-vf", "scale=\(size)",
                             "-pix_fmt", format, "-c:v", "ffv1", input])
            let result = try Tool.run(Tool.velvet, ["analyze", input, "--quiet"])
            XCTAssertEqual(result.status, 0, "\(name): \(result.stderr)")
            XCTAssertEqual(result.stdout.split(separator: "\n").count, 3, "\(name): a line per frame")
        }
    }

    func testAnalyzeJSONOverlayAndExitCodes() throws {
        let scratch = try Scratch()
        let input = scratch.path("grace.png")
        try Tool.ffmpeg(["-i", photo, "-vf", "scale=256:-2", input])
        let result = try velvet(["analyze", input, "--json", "--overlay", scratch.path("overlay.png")])
        let report = try json(result)
        XCTAssertEqual(report["input"] as? String, input)
        XCTAssertEqual(report["width"] as? Int, 256)
        let frames = try XCTUnwrap(report["frames"] as? [[String: Any]])
        XCTAssertEqual(frames.count, 1)
        assertKeys(frames[0], ["frame", "time", "faces"])
        let face = try XCTUnwrap((frames[0]["faces"] as? [[String: Any]])?.first, "a face in the photo")
        assertKeys(face, ["track", "score", "held", "weight", "box", "landmarks"])
        XCTAssertEqual(face["held"] as? Int, 0, "a still's face is seen")
        XCTAssertEqual(face["weight"] as? Double, 1)
        XCTAssertEqual((face["box"] as? [Double])?.count, 4)
        let landmarks = try XCTUnwrap(face["landmarks"] as? [[Double]])
        XCTAssertEqual(landmarks.count, 468)
        XCTAssertTrue(landmarks.allSatisfy { $0.count == 3 })
        XCTAssertEqual(try Tool.probe(scratch.path("overlay.png"), "stream=width,height"), try Tool.probe(input, "stream=width,height"))
        XCTAssertNotEqual(try Tool.pixels(scratch.path("overlay.png"), "rgb24"), try Tool.pixels(input, "rgb24"), "the mesh is drawn")

        let text = try velvet(["analyze", input])
        XCTAssertTrue(text.stdout.hasPrefix("frame 0 (0.000 s): 1 face(s): #1 score"), text.stdout)
        _ = try velvet(["analyze", scratch.path("missing.png")], status: 1)
        _ = try velvet(["analyze", input, "--detector", "sideways"], status: 2)
        _ = try velvet(["analyze", input, "--overlay", scratch.path("overlay.png")], status: 1) // exists, no -y
        _ = try velvet(["analyze", input, "--overlay", scratch.path("overlay.png"), "-y"])
        // A video's drawings are a video: a picture path is a usage error before any work.
        let video = scratch.path("grace.mkv")
        try Tool.ffmpeg(["-loop", "1", "-i", input, "-frames:v", "2", "-c:v", "ffv1", video])
        let refused = try velvet(["analyze", video, "--overlay", scratch.path("video-overlay.png")], status: 2)
        XCTAssertTrue(refused.stderr.contains("is a picture but"), refused.stderr)
        XCTAssertEqual(scratch.files, ["grace.mkv", "grace.png", "overlay.png"], "no scratch or partial files left")
    }

    /// analyze's files, as render's: `--json` into its own input or into its `--tracks` is a
    /// usage error (it appended the track document to the photo); an output without an
    /// extension names the extensions (the message offered `--format`, which analyze lacks);
    /// drawings of an odd-sized picture into a video are 4:4:4 (4:2:0 was refused, offering
    /// `--pix-fmt`); a video of one frame may be drawn into a picture, as render takes it.
    func testAnalyzeFilesAsRenderTakesThem() throws {
        let scratch = try Scratch()
        let input = scratch.path("grace.png")
        try Tool.ffmpeg(["-i", photo, "-vf", "scale=161:121,setsar=1", input])
        let before = try Data(contentsOf: URL(fileURLWithPath: input))
        let appended = try Tool.run("/bin/bash", ["-c", "exec '\(Tool.velvet)' analyze '\(input)' --json >> '\(input)'"],
                                    environment: ["VELVET_MODELS_DIR": repository.appendingPathComponent("models").path])
        XCTAssertEqual(appended.status, 2, appended.stderr)
        XCTAssertTrue(appended.stderr.contains("--json prints to standard output, which is the input"), appended.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: input)), before, "the input is untouched")
        let piped = try Tool.run("/bin/bash", ["-c", "'\(Tool.velvet)' analyze '\(input)' --json --tracks /dev/stdout -y | cat > /dev/null; exit ${PIPESTATUS[0]}"],
                                 environment: ["VELVET_MODELS_DIR": repository.appendingPathComponent("models").path])
        XCTAssertEqual(piped.status, 2, "two documents on one standard output: \(piped.stderr)")

        let bare = try velvet(["analyze", input, "--overlay", scratch.path("overlay")], status: 2)
        XCTAssertTrue(bare.stderr.contains("use .png or .jpg for a picture, .mp4 or .mkv for a video"), bare.stderr)
        XCTAssertFalse(bare.stderr.contains("--format"), bare.stderr)

        _ = try velvet(["analyze", input, "--mask", scratch.path("mask.mp4"), "--overlay", scratch.path("overlay.mkv"), "--quiet"])
        for drawing in ["mask.mp4", "overlay.mkv"] {
            XCTAssertEqual(try Tool.probe(scratch.path(drawing), "stream=width,height,pix_fmt"), "161,121,yuv444p", drawing)
        }

        let single = scratch.path("single.mp4"), three = scratch.path("three.mp4")
        try Tool.ffmpeg(["-i", photo, "-vf", "scale=160:188", "-c:v", "libx264", single])
        try Tool.ffmpeg(["-loop", "1", "-i", photo, "-vf", "scale=160:188", "-frames:v", "3", "-c:v", "libx264", three])
        _ = try velvet(["analyze", single, "--overlay", scratch.path("single.png"), "--quiet"])
        XCTAssertEqual(try Tool.probe(scratch.path("single.png"), "stream=width,height"), "160,188")
        let refused = try velvet(["analyze", three, "--overlay", scratch.path("three.png"), "--quiet"], status: 2)
        XCTAssertTrue(refused.stderr.contains("is a picture but"), refused.stderr)
        let broken = scratch.path("broken.mp4")
        try Data("not a video".utf8).write(to: URL(fileURLWithPath: broken))
        let unreadable = try velvet(["analyze", broken, "--overlay", scratch.path("broken.png"), "--quiet"], status: 1)
        XCTAssertTrue(unreadable.stderr.contains("cannot open"), unreadable.stderr)
    }

    /// analyze's `--json` document (27 KB for the photo, more than stdout's buffer) to a full
    /// disk says why, as render's does; to a pipe its reader closed it ends quietly, as render's
    /// does (both said "cannot write to standard output: a write failed", exit 1).
    func testAnalyzeJSONToAFullOrClosedStandardOutput() throws {
        let full = try Tool.run(Tool.velvet, ["analyze", photo, "--json"], stdoutPath: "/dev/full")
        XCTAssertEqual(full.status, 1, full.stderr)
        XCTAssertEqual(full.stderr.split(separator: "\n").last, "velvet: error: cannot write to standard output: No space left on device")
        let closed = try Tool.run("/bin/bash", ["-c", "set -o pipefail; '\(Tool.velvet)' analyze '\(photo)' --json | (exec 0<&-; sleep 1)"])
        XCTAssertEqual(closed.status, 0, closed.stderr)
        XCTAssertEqual(closed.messages.trimmingCharacters(in: .newlines), "", closed.stderr)
    }

    /// `analyze` moves its outputs into place together once all are finished: a drawing that
    /// fails (here the mask, drawn last, onto a full disk) leaves neither the overlay drawn
    /// before it nor the track file (each was in place as soon as it was written, and stayed
    /// while analyze exited 1).
    func testAnalyzeLandsItsOutputsTogether() throws {
        let scratch = try Scratch()
        let input = scratch.path("grace.png"), tracks = scratch.path("tracks.json")
        try Tool.ffmpeg(["-i", photo, "-vf", "scale=160:-2", input])
        try FileManager.default.createSymbolicLink(atPath: scratch.path("full.png"), withDestinationPath: "/dev/full")
        let failed = try velvet(["analyze", input, "--tracks", tracks, "--overlay", scratch.path("overlay.png"),
                                 "--mask", scratch.path("full.png"), "--quiet", "-y"], status: 1)
        XCTAssertTrue(failed.stderr.contains("full.png"), failed.stderr)
        XCTAssertEqual(scratch.files.sorted(), ["full.png", "grace.png"], "no output, finished or partial, is left")
        _ = try velvet(["analyze", input, "--tracks", tracks, "--overlay", scratch.path("overlay.png"), "--mask", scratch.path("mask.png"), "--quiet"])
        XCTAssertEqual(scratch.files.sorted(), ["full.png", "grace.png", "mask.png", "overlay.png", "tracks.json"])
    }

    /// The memory estimate covers a small render with effects, whose models and pipelines are a
    /// fixed part of their own (a 320x240 render was estimated at 199 MiB and peaked at about
    /// 290 MiB, so a limit of 200M let it start). Peak RSS as the kernel counts it for the child,
    /// validation off (the layer is not what users run).
    func testTheMemoryEstimateCoversASmallRenderWithEffects() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.mp4")
        try Tool.ffmpeg(["-loop", "1", "-i", photo, "-vf", "scale=320:240,setsar=1", "-r", "25", "-t", "2", "-c:v", "libx264", "-pix_fmt", "yuv420p", input])
        let models = ["VELVET_MODELS_DIR": repository.appendingPathComponent("models").path, "VELVET_VALIDATION": "0"]
        let refused = try Tool.run(Tool.velvet, ["render", input, "-o", scratch.path("refused.mp4")],
                                   environment: models.merging(["VELVET_MEMORY_LIMIT": "1M"]) { $1 })
        let stated = try XCTUnwrap(refused.stderr.range(of: "needs about ").map { refused.stderr[$0.upperBound...].prefix { $0 != " " } },
                                   refused.stderr)
        XCTAssertTrue(refused.stderr.contains("needs about \(stated) MiB"), refused.stderr)
        let estimate = try XCTUnwrap(Double(stated))
        let peak = "import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
            + "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
        let measured = try Tool.run("/usr/bin/python3", ["-c", peak, Tool.velvet, "render", input, "-o", scratch.path("out.mp4"), "--quiet"],
                                    environment: models)
        let fields = measured.stdout.split(whereSeparator: \.isWhitespace)
        XCTAssertEqual(fields.first, "0", measured.stdout + measured.stderr)
        let peakMiB = try XCTUnwrap(fields.last.flatMap { Double($0) }) / 1024
        XCTAssertLessThanOrEqual(peakMiB, estimate, "peak RSS \(peakMiB) MiB against an estimate of \(estimate) MiB")
    }

    /// `analyze --json` prints its report once every output is written: interrupted while it
    /// draws the overlay, standard output holds the error's object alone (the whole track
    /// document came first and the error after it, two documents).
    func testAnInterruptedAnalyzePrintsTheErrorAlone() throws {
        let scratch = try Scratch()
        let video = scratch.path("long.mkv"), printed = scratch.path("stdout.json")
        try Tool.ffmpeg(["-loop", "1", "-i", photo, "-vf", "scale=160:-2", "-r", "10", "-t", "20", "-c:v", "ffv1", video])
        let analyze = try Tool.start("/bin/bash", ["-c", "exec '\(Tool.velvet)' analyze '\(video)' --json --overlay '\(scratch.path("overlay.mkv"))' "
                                                   + "> '\(printed)'"])
        XCTAssertTrue(Tool.waitUntil(seconds: 300) { scratch.files.contains { $0.hasPrefix(".overlay.mkv.velvet-partial") } },
                      "the overlay was never started")
        let result = analyze.stop(with: SIGTERM)
        XCTAssertEqual(result.status, 128 + SIGTERM, result.stderr)
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: printed))) as? [String: Any]
        XCTAssertEqual(object?["exit_code"] as? Int, 143, "one JSON object, the error's")
        XCTAssertEqual(scratch.files, ["long.mkv", "stdout.json"])
    }

    /// A `--device` that names no device is a usage error before any file is looked at, in every
    /// command that takes one (render said "directory does not exist" first, exit 1, where the
    /// input was missing it named the device; analyze named the missing input).
    func testABadDeviceIsAUsageErrorBeforeAnyFile() throws {
        let scratch = try Scratch()
        let missing = scratch.path("missing.mp4"), nowhere = scratch.path("no/such/folder/out.mp4")
        for command in [["render", missing, "-o", nowhere], ["compare", missing, "-o", nowhere], ["analyze", missing, "--overlay", nowhere]] {
            let result = try velvet(command + ["--device", "99"], status: 2)
            XCTAssertTrue(result.stderr.hasPrefix("velvet: there is no Vulkan device 99"), "\(command[0]): \(result.stderr)")
        }
    }

    /// `velvet --version` and `velvet version`: the release, the git describe stamped at build
    /// time (the checkout's own, as the tests build from it), the device and FFmpeg's libraries.
    func testVersion() throws {
        let version = try velvet(["--version"])
        XCTAssertEqual(try velvet(["version"]).stdout, version.stdout)
        let lines = version.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, version.stdout)
        // The stamp names a commit of this checkout (the build's; HEAD may have moved since).
        let stamp = try XCTUnwrap(lines[0].range(of: " (git ").map { String(lines[0][$0.upperBound...].dropLast()) }, lines[0])
        XCTAssertTrue(lines[0].hasPrefix("velvet ") && lines[0].hasSuffix(")"), lines[0])
        if try Tool.run("/usr/bin/git", ["-C", repository.path, "rev-parse", "--git-dir"]).status == 0 {
            let described = stamp.hasSuffix("-dirty") ? String(stamp.dropLast("-dirty".count)) : stamp
            let commit = described.range(of: "-g", options: .backwards).map { String(described[$0.upperBound...]) } ?? described
            let resolved = try Tool.run("/usr/bin/git", ["-C", repository.path, "rev-parse", "--verify", "--quiet", "\(commit)^{commit}"])
            XCTAssertEqual(resolved.status, 0, "\(stamp) names no commit of the checkout")
        } else {
            XCTAssertEqual(stamp, "unknown")
        }
        XCTAssertTrue(lines[1].hasPrefix("Vulkan device: llvmpipe") && lines[1].contains("[cpu]"), lines[1])
        let ffmpeg = try Tool.run("ffmpeg", ["-version"]).stdout.split(separator: " ").dropFirst(2).first.map(String.init) ?? "?"
        XCTAssertTrue(lines[2].hasPrefix("FFmpeg \(ffmpeg): libavformat 59."), "\(lines[2]) vs ffmpeg \(ffmpeg)")
        for library in ["libavcodec", "libavutil", "libswscale", "libswresample"] { XCTAssertTrue(lines[2].contains(library), lines[2]) }
    }

    /// Every command the CLI declares (`velvet help --commands` lists them from the one table
    /// the dispatch uses) answers `--help` and `-h` with its own usage section on stdout, exit 0.
    func testHelpForEveryCommand() throws {
        let commands = try velvet(["help", "--commands"]).stdout.split(separator: "\n").map(String.init)
        for expected in ["render", "demo", "compare", "batch", "analyze", "presets", "luts", "devices", "bench", "version", "help"] {
            XCTAssertTrue(commands.contains(expected), "\(expected) in \(commands)")
        }
        let overview = try velvet(["--help"]).stdout
        XCTAssertEqual(try velvet(["-h"]).stdout, overview)
        XCTAssertEqual(try velvet(["help"]).stdout, overview)
        for command in commands {
            let help = try velvet([command, "--help"])
            XCTAssertTrue(help.stdout.hasPrefix("usage: velvet \(command) [options]\n\n  \(command)"), help.stdout)
            XCTAssertTrue(help.stdout.contains("exit codes: 0 success"), "\(command): the shared part")
            XCTAssertTrue(overview.contains("\n  \(command) "), "\(command) in velvet help")
            XCTAssertEqual(help.stderr, "", command)
            XCTAssertEqual(try velvet([command, "-h"]).stdout, help.stdout, command)
            XCTAssertEqual(try velvet(["help", command]).stdout, help.stdout, command)
        }
        XCTAssertTrue(try velvet(["render", "--help"]).stdout.contains("--encoder-opt K=V"))
        // --help wins over anything else on the line, an option missing its value included (exit 2).
        for line in [["render", "--help", "--frobnicate"], ["render", "--help", "-o"], ["demo", "--help", "--frames"]] {
            let help = try Tool.run(Tool.velvet, line)
            XCTAssertEqual(help.status, 0, "\(line): \(help.stderr)")
            XCTAssertTrue(help.stdout.hasPrefix("usage: velvet \(line[0]) [options]"), "\(line)")
        }
        // So does `velvet help CMD` over the options and arguments beside it (they were usage errors).
        for beside in [["-o", "x.mp4"], ["--strength", "2"], ["--bogus"], ["extra"]] {
            let help = try Tool.run(Tool.velvet, ["help", "render"] + beside)
            XCTAssertEqual(help.status, 0, "help render \(beside): \(help.stderr)")
            XCTAssertTrue(help.stdout.hasPrefix("usage: velvet render [options]"), "help render \(beside)")
        }
        XCTAssertFalse(try velvet(["devices", "--help"]).stdout.contains("--encoder-opt"), "only the command's own section")
        // Each command's own options (demo's, devices' and analyze's model options were missing).
        for (command, options) in [("demo", ["--output-dir", "--assets", "--frames", "--size", "--quiet"]), ("devices", ["--json"]),
                                   ("bench", ["docs/CLI.md"]),
                                   ("analyze", ["--json", "--tracks", "--overlay", "--mask", "--detector", "--max-faces", "--look-ahead",
                                                "--segmentation-model", "--models"])] {
            let help = try velvet([command, "--help"]).stdout
            for option in options { XCTAssertTrue(help.contains(option), "\(command): \(option)") }
        }
    }

    /// A wrong command line is a usage error for every command: exit 2, one line, before any
    /// work; with --json the error is also one JSON object on stdout.
    func testUsageErrorsOfEveryCommand() throws {
        let commands = try velvet(["help", "--commands"]).stdout.split(separator: "\n").map(String.init)
        for command in commands {
            let plain = try velvet([command, "--frobnicate", "1"], status: 2)
            XCTAssertEqual(plain.stderr.split(separator: "\n").count, 1, "\(command): \(plain.stderr)")
            let pointer = command == "help" ? "velvet help" : "velvet \(command) --help"
            XCTAssertTrue(plain.stderr.hasSuffix("(see \(pointer))\n"), "\(command): \(plain.stderr)")
            let json = try velvet([command, "--frobnicate", "1", "--json"], status: 2)
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: json.output) as? [String: Any], "\(command): \(json.stdout)")
            XCTAssertEqual(object["exit_code"] as? Int, 2, command)
            XCTAssertFalse((object["error"] as? String ?? "").isEmpty, command)
        }
        _ = try velvet(["help", "frobnicate"], status: 2)
        _ = try velvet(["frobnicate", "--help"], status: 2)
    }

    func testDevicesListsLavapipeAndMarksTheChosenOne() throws {
        let text = try velvet(["devices"])
        let lines = text.stdout.split(separator: "\n")
        XCTAssertTrue(lines.contains { $0.hasPrefix("* ") && $0.contains("llvmpipe") && $0.contains("[cpu]") }, text.stdout)
        XCTAssertTrue(lines.last?.hasPrefix("velvet would use device ") == true, text.stdout)
        let listed = try XCTUnwrap(try JSONSerialization.jsonObject(with: try velvet(["devices", "--json", "--device", "0"]).output) as? [[String: Any]])
        let first = try XCTUnwrap(listed.first { $0["index"] as? Int == 0 })
        for key in ["api", "driver", "index", "memoryMiB", "name", "selected", "type"] { XCTAssertNotNil(first[key], key) }
        XCTAssertEqual(first["selected"] as? Bool, true)
        XCTAssertEqual(listed.filter { $0["selected"] as? Bool == true }.count, 1)
        XCTAssertTrue(listed.contains { ($0["name"] as? String ?? "").contains("llvmpipe") && $0["type"] as? String == "cpu" })
        _ = try velvet(["devices", "--device", "99"], status: 2)
    }

    func testBenchBlurSkinNNAndTracker() throws {
        let blur = try json(try velvet(["bench", "blur", "--width", "64", "--height", "48", "--sigma", "2", "--iterations", "2"]))
        assertKeys(blur, ["device", "kind", "width", "height", "sigma", "iterations", "median_ms", "min_ms"])

        let skin = try json(try velvet(["bench", "skin", "--width", "64", "--height", "48", "--iterations", "1"]))
        assertKeys(skin, ["device", "kind", "width", "height", "faces", "iterations", "bilateral", "methods"])
        let methods = try XCTUnwrap(skin["methods"] as? [String: [String: Any]])
        XCTAssertEqual(methods.keys.sorted(), ["bilateral", "freqsep"])
        for method in methods.values { assertKeys(method, ["median_ms", "min_ms", "sections"]) }

        let nn = try json(try velvet(["bench", "nn", "--model", "face_detection_short_range", "--iterations", "1", "--warmup", "0",
                                      "--models", repository.appendingPathComponent("models").path]))
        assertKeys(nn, ["device", "kind", "models"])
        let model = try XCTUnwrap((nn["models"] as? [[String: Any]])?.first)
        assertKeys(model, ["model", "median_ms", "min_ms", "launches", "levels", "arena_bytes", "iterations"])
        // Without --models, where every other command looks: from another folder, the models
        // of the binary's own checkout (a bundle's beside it); it looked in ./models only.
        let elsewhere = try Scratch()
        let found = try Tool.run("/bin/bash", ["-c", "cd '\(elsewhere.url.path)' && '\(Tool.velvet)' bench nn --model face_detection_short_range "
                                               + "--iterations 1 --warmup 0"], environment: ["VELVET_MODELS_DIR": ""])
        XCTAssertEqual(found.status, 0, found.stderr)
        let listed = try json(found)["models"] as? [[String: Any]]
        XCTAssertEqual(listed?.count, 1, found.stdout)

        let tracker = try json(try velvet(["bench", "tracker", "--input", photo, "--frames", "2", "--warmup", "0"]))
        assertKeys(tracker, ["device", "kind", "width", "height", "frames", "wall_ms_median", "wall_ms_min", "gpu_ms_median",
                             "submissions_per_frame", "faces", "segmentation_model"])
        XCTAssertEqual(tracker["faces"] as? Int, 1)
    }

    /// Without --work-dir, bench media keeps its fixed-name files in a folder of this user's
    /// own (0700) in TMPDIR: a link planted in a shared folder (/tmp) had a render written
    /// through it into any file of the user's. A planted folder or link there is refused.
    func testBenchWorkFilesAreInAPrivateFolder() throws {
        let scratch = try Scratch()
        let shared = scratch.path("tmp")
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        chmod(shared, 0o1777)
        try Data("precious".utf8).write(to: URL(fileURLWithPath: scratch.path("victim.txt")))
        // What a planted link at the old fixed name would have overwritten.
        try FileManager.default.createSymbolicLink(atPath: shared + "/velvet-bench-gpu.mp4", withDestinationPath: scratch.path("victim.txt"))
        let environment = ["TMPDIR": shared + "/"]
        let run = try Tool.run(Tool.velvet, ["bench", "media", "--photo", photo, "--frames", "1", "--size", "16x16", "--preset-x264", "ultrafast"],
                               environment: environment)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try String(contentsOfFile: scratch.path("victim.txt"), encoding: .utf8), "precious")
        let own = shared + "/velvet-bench-\(getuid())"
        let attributes = try FileManager.default.attributesOfItem(atPath: own)
        XCTAssertEqual((attributes[.posixPermissions] as? Int) ?? 0, 0o700)
        XCTAssertTrue(FileManager.default.fileExists(atPath: own + "/velvet-bench-gpu.mp4"))

        try FileManager.default.removeItem(atPath: own)
        try FileManager.default.createSymbolicLink(atPath: own, withDestinationPath: scratch.url.path)
        let planted = try Tool.run(Tool.velvet, ["bench", "media", "--photo", photo, "--frames", "1", "--size", "16x16"], environment: environment)
        XCTAssertEqual(planted.status, 1, planted.stderr)
        XCTAssertTrue(planted.stderr.contains("is not a private folder"), planted.stderr)
        // An empty TMPDIR is unset (Foundation read it as the root folder: /velvet-bench-0).
        let empty = try Tool.run(Tool.velvet, ["bench", "media", "--photo", photo, "--frames", "1", "--size", "16x16", "--json"],
                                 environment: ["TMPDIR": ""])
        XCTAssertEqual(empty.status, 0, empty.stderr)
        let report = try JSONSerialization.jsonObject(with: Data(empty.stdout.utf8)) as? [String: Any]
        XCTAssertTrue((report?["clip"] as? String)?.hasPrefix("/tmp/velvet-bench-\(getuid())/") == true, empty.stdout)
    }

    /// A signal while `bench media` times the ffmpeg CLI ends that ffmpeg too (it ran on,
    /// orphaned, for a second or two and then left its `.velvet-partial` file in the work folder).
    func testAnInterruptedBenchEndsItsFFmpeg() throws {
        let scratch = try Scratch()
        let bench = try Tool.start(Tool.velvet, ["bench", "media", "--photo", photo, "--frames", "600", "--size", "160x90",
                                                 "--preset-x264", "ultrafast", "--work-dir", scratch.url.path])
        let parent = bench.process.processIdentifier
        var child: Int32?
        XCTAssertTrue(Tool.waitUntil(seconds: 300) {
            child = Self.children(of: parent).first { (try? String(contentsOfFile: "/proc/\($0)/comm", encoding: .utf8)) == "ffmpeg\n" }
            return child != nil
        }, "the ffmpeg CLI row never started")
        let result = bench.stop(with: SIGTERM)
        XCTAssertEqual(result.status, 128 + SIGTERM, result.stderr)
        guard let child else { return }
        let state = (try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8))?.split(separator: ")").last?
            .trimmingCharacters(in: .whitespaces).first
        XCTAssertTrue(state == nil || state == "Z", "ffmpeg \(child) still runs (state \(state.map(String.init) ?? "-"))")
        Thread.sleep(forTimeInterval: 3) // an orphan would have written its file by now
        let partials = scratch.files.filter { $0.contains("velvet-partial") }
        XCTAssertEqual(partials, [], "left behind")
    }

    /// The processes whose parent is `parent` (from /proc).
    private static func children(of parent: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { process in
            guard let stat = try? String(contentsOfFile: "/proc/\(process)/stat", encoding: .utf8),
                  let fields = stat.split(separator: ")").last?.split(separator: " "), fields.count > 1 else { return false }
            return Int32(fields[1]) == parent
        }
    }

    /// The renders' scratch files are named for what they hold: `--format nut` wrote NUT into
    /// files named .mp4, and `--codec ffv1` asked the MP4 muxer for FFV1.
    func testBenchMediaNamesItsFilesForTheirContainer() throws {
        let scratch = try Scratch()
        for (options, ext) in [(["--format", "nut", "--preset-x264", "ultrafast"], "nut"), (["--codec", "ffv1"], "mkv")] {
            let run = try velvet(["bench", "media", "--photo", photo, "--frames", "1", "--size", "16x16", "--work-dir", scratch.url.path]
                                 + options)
            XCTAssertTrue(run.stdout.contains("| Velvet passthrough"), run.stdout)
            for name in ["plain", "gpu"] {
                let file = scratch.path("velvet-bench-\(name).\(ext)")
                XCTAssertTrue(FileManager.default.fileExists(atPath: file), "\(options): no \(file)")
                XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.path("velvet-bench-\(name).mp4")), "\(options)")
                let probe = try Tool.run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "format=format_name:stream=codec_name",
                                                              "-of", "csv=p=0", file])
                XCTAssertTrue(probe.stdout.contains(ext == "nut" ? "nut" : "matroska"), "\(options): \(probe.stdout)")
                if ext == "mkv" { XCTAssertTrue(probe.stdout.contains("ffv1"), probe.stdout) }
            }
        }
    }

    /// The clip a benchmark keeps between runs, damaged on disk, is named with what to do.
    func testADamagedKeptBenchClipSaysHowToMakeItAgain() throws {
        let scratch = try Scratch()
        let arguments = ["bench", "media", "--photo", photo, "--frames", "2", "--size", "16x16", "--work-dir", scratch.url.path,
                         "--preset-x264", "ultrafast"]
        _ = try velvet(arguments)
        let clip = try XCTUnwrap(scratch.files.first { $0.hasPrefix("velvet-bench-grace_hopper-") && $0.hasSuffix("-16x16-2.mp4") })
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch.path(clip)))
        try handle.truncate(atOffset: 100)
        try handle.close()
        let damaged = try velvet(arguments, status: 1)
        XCTAssertEqual(damaged.stderr.split(separator: "\n").filter { !$0.contains("validation layer on") }.count, 1, damaged.stderr)
        XCTAssertTrue(damaged.stderr.contains("kept clip \(scratch.path(clip)) does not read"), damaged.stderr)
        XCTAssertTrue(damaged.stderr.contains("remove it, and the next run makes it again"), damaged.stderr)
        try FileManager.default.removeItem(atPath: scratch.path(clip))
        _ = try velvet(arguments)
    }

    func testBenchMediaAndSoak() throws {
        let scratch = try Scratch()
        let media = try velvet(["bench", "media", "--photo", photo, "--frames", "4", "--size", "160x120", "--work-dir", scratch.url.path,
                                "--preset-x264", "ultrafast"])
        XCTAssertTrue(media.stdout.contains("| pipeline | fps |"), media.stdout)
        XCTAssertTrue(media.stdout.contains("| plain transcode") && media.stdout.contains("| Velvet passthrough"), media.stdout)
        XCTAssertTrue(media.stdout.contains("passthrough / plain transcode = "), media.stdout)
        // Each render's start-up and steady state apart, and its threads' CPU time.
        XCTAssertTrue(media.stdout.contains("| pipeline | fps | first frame out, ms | steady fps (after the first frame) |"), media.stdout)
        let plainRow = try XCTUnwrap(media.stdout.split(separator: "\n").first { $0.hasPrefix("| plain transcode") })
        let cells = plainRow.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        XCTAssertEqual(cells.count, 4, String(plainRow))
        XCTAssertTrue(cells.dropFirst().allSatisfy { (Double($0) ?? 0) > 0 }, String(plainRow))
        XCTAssertTrue(media.stdout.contains("CPU ms per frame (plain): decode "), media.stdout)

        // With --beauty, each method renders the warm-up clip first, untimed: the trace shows
        // two 8-frame renders before the four timed ones.
        let trace = scratch.path("trace.json")
        let beauty = try Tool.run(Tool.velvet, ["bench", "media", "--photo", photo, "--frames", "4", "--size", "160x120", "--work-dir",
                                                scratch.url.path, "--preset-x264", "ultrafast", "--beauty"],
                                  environment: ["VELVET_TRACE": trace, "VELVET_MODELS_DIR": repository.appendingPathComponent("models").path])
        XCTAssertEqual(beauty.status, 0, beauty.stderr)
        XCTAssertTrue(beauty.stdout.contains("each method rendered 8 frames first, untimed"), beauty.stdout)
        XCTAssertTrue(beauty.stdout.contains("beauty (bilateral) / plain transcode = "), beauty.stdout)
        let events = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: trace))) as? [String: Any])?["traceEvents"] as? [[String: Any]])
        let spans = events.filter { $0["ph"] as? String == "X" }.sorted { ($0["ts"] as? Double ?? 0) < ($1["ts"] as? Double ?? 0) }
        let renders = spans.filter { $0["name"] as? String == "render" }.map { ($0["ts"] as? Double ?? 0, ($0["ts"] as? Double ?? 0) + ($0["dur"] as? Double ?? 0)) }
        let encoded = renders.map { render in spans.filter { $0["name"] as? String == "encode" && (render.0...render.1).contains($0["ts"] as? Double ?? -1) }.count }
        XCTAssertEqual(encoded, [8, 8, 4, 4, 4, 4], "warm-up renders, then plain, passthrough, freqsep, bilateral")

        // The soak's growth check, shown failing against a bar no run can meet.
        let arguments = ["bench", "soak", "--photo", photo, "--frames", "10", "--every", "2", "--size", "160x120", "--work-dir", scratch.url.path]
        let soak = try velvet(arguments + ["--max-growth", "-100"], status: 1)
        XCTAssertTrue(soak.stdout.contains("| frame | RSS MiB | GPU memory blocks MiB |"), soak.stdout)
        XCTAssertTrue(soak.stdout.contains("RSS growth after warm-up: "), soak.stdout)
        let last = soak.stderr.split(separator: "\n").last ?? ""
        XCTAssertTrue(last.hasPrefix("velvet: error: resident memory grew ") && last.hasSuffix("above the -100 % bar (--max-growth)"), soak.stderr)
        XCTAssertFalse(scratch.files.contains { $0.hasPrefix(".") }, "no partial files: \(scratch.files)")
    }

    /// Every flag of the knob table writes its preset field: `presets save` with the flag over
    /// `none`, then `presets show` holds the value in that field (and nothing else changed).
    func testEveryKnobFlagWritesItsPresetField() throws {
        let scratch = try Scratch()
        let environment = ["XDG_CONFIG_HOME": scratch.path("config")]
        let none = try JSONSerialization.jsonObject(with: try BeautyPreset().encoded()) as? NSDictionary
        for knob in BeautyPreset.knobs {
            guard let flag = knob.flag else { continue }
            let text: String, expected: Any
            switch knob.values {
            case .number(let range):
                (text, expected) = (KnobTable.number(range.upperBound), Double(range.upperBound))
            case .choice(let names):
                (text, expected) = (names[names.count - 1], names[names.count - 1])
            case .colour:
                (text, expected) = ("#123456", "#123456")
            }
            let save = try Tool.run(Tool.velvet, ["presets", "save", "k", "-y", "--preset", "none", flag, text], environment: environment)
            XCTAssertEqual(save.status, 0, "\(flag) \(text): \(save.stderr)")
            let shown = try Tool.run(Tool.velvet, ["presets", "show", "k"], environment: environment)
            var object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any])
            let path = knob.key.split(separator: ".").map(String.init)
            var edited = object
            for key in path.dropLast() { object = object[key] as? [String: Any] ?? [:] }
            XCTAssertEqual(object[path[path.count - 1]] as? NSObject, expected as? NSObject, "\(flag) -> \(knob.key)")
            // Put the none preset's value back: nothing else may differ.
            func restore(_ dictionary: [String: Any], _ path: ArraySlice<String>, _ original: [String: Any]) -> [String: Any] {
                var dictionary = dictionary
                let key = path.first!
                dictionary[key] = path.count == 1 ? original[key] : restore(dictionary[key] as? [String: Any] ?? [:], path.dropFirst(),
                                                                            original[key] as? [String: Any] ?? [:])
                return dictionary
            }
            edited = restore(edited, path[...], none as? [String: Any] ?? [:])
            XCTAssertEqual(edited as NSDictionary, none, "\(flag) changed more than \(knob.key)")
            let refused = try Tool.run(Tool.velvet, ["presets", "save", "k", "-y", flag, "no-such-value"], environment: environment)
            XCTAssertEqual(refused.status, 2, "\(flag) no-such-value: \(refused.stderr)")
            XCTAssertTrue(refused.stderr.contains(flag), refused.stderr)
        }
    }
}
