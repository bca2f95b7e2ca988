import Foundation
import VelvetTestSupport
import XCTest

/// `-` as input and output, through real (non-seekable) pipes made by the shell, and
/// `batch --list -`.
final class PipeTests: XCTestCase {
    /// Runs a bash pipeline; the exit status is velvet's (the pipeline's first command), its
    /// stderr is the pipeline's.
    private func pipeline(_ script: String) throws -> Tool.Result {
        try Tool.run("/bin/bash", ["-c", "set -o pipefail; velvet=\(Tool.velvet); " + script])
    }

    /// "codec,frames decoded" of the first video stream.
    private func frames(_ path: String) throws -> String {
        try Tool.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=codec_name,nb_read_frames",
                                 "-of", "csv=p=0", path]).stdout.split(separator: "\n").first.map(String.init) ?? "" // MPEG-TS lists it under its program too
    }

    /// stderr without the validation layer's report (VELVET_VALIDATION=1).
    private func messages(_ result: Tool.Result) -> [Substring] {
        result.stderr.split(separator: "\n").filter { !$0.hasPrefix("velvet: validation layer on") }
    }

    /// Every container FFmpeg demuxes from a pipe: the render from standard input is the
    /// render from the file, frame for frame.
    func testStandardInputInEveryPipeContainer() throws {
        let scratch = try Scratch()
        for (format, codec, name) in [("matroska", "libx264", "in.mkv"), ("nut", "libx264", "in.nut"),
                                      ("yuv4mpegpipe", "wrapped_avframe", "in.y4m"), ("mpegts", "libx264", "in.ts")] {
            let input = scratch.path(name), fromFile = scratch.path("file-\(name).mkv"), fromPipe = scratch.path("pipe-\(name).mkv")
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x64:rate=25", "-frames:v", "12", "-c:v", codec, "-f", format, input])
            XCTAssertEqual(try Tool.run(Tool.velvet, ["render", input, "-o", fromFile, "--no-effects", "--quiet"]).status, 0)
            let piped = try pipeline("cat '\(input)' | $velvet render - -o '\(fromPipe)' --no-effects --quiet")
            XCTAssertEqual(piped.status, 0, "\(format): \(piped.stderr)")
            XCTAssertEqual(messages(piped), [], format)
            XCTAssertEqual(try frames(fromPipe), "h264,12", format)
            XCTAssertEqual(try Tool.frameMD5s(fromPipe), try Tool.frameMD5s(fromFile), "\(format): the pipe reads as the file does")
        }
    }

    /// An MP4 whose index (moov) follows data larger than what FFmpeg buffers cannot be read
    /// from a pipe (ffmpeg fails too): the one line says why and what to do; with its index
    /// first (faststart) the same file reads from the pipe.
    func testAnMP4WithItsIndexLastNamesFaststart() throws {
        let scratch = try Scratch()
        let input = scratch.path("late.mp4"), moved = scratch.path("fast.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25", "-t", "8", "-c:v", "libx264", "-preset", "ultrafast", input])
        try Tool.ffmpeg(["-i", input, "-c", "copy", "-movflags", "faststart", moved])
        let late = try pipeline("cat '\(input)' | $velvet render - -o '\(scratch.path("a.mkv"))' --no-effects --quiet")
        XCTAssertEqual(late.status, 1, late.stderr)
        XCTAssertEqual(messages(late).count, 1, late.stderr)
        XCTAssertTrue(late.stderr.contains("needs its index first: give its path, or remux it with ffmpeg -movflags faststart"), late.stderr)
        let fast = try pipeline("cat '\(moved)' | $velvet render - -o '\(scratch.path("b.mkv"))' --no-effects --quiet --preset-x264 ultrafast")
        XCTAssertEqual(fast.status, 0, fast.stderr)
    }

    /// `-o -` with each streaming `--format`, into a pipe; both ends at once; stdout holds
    /// the video and nothing else.
    func testStandardOutputInEveryStreamingFormat() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x64:rate=25", "-frames:v", "12", "-c:v", "libx264", input])
        let reference = scratch.path("ref.mkv")
        XCTAssertEqual(try Tool.run(Tool.velvet, ["render", input, "-o", reference, "--no-effects", "--quiet", "--crf", "0"]).status, 0)
        for (format, name, codec) in [("matroska", "o.mkv", "h264"), ("nut", "o.nut", "h264"), ("mpegts", "o.ts", "h264"),
                                      ("y4m", "o.y4m", "rawvideo")] {
            let output = scratch.path(name)
            let result = try pipeline("$velvet render '\(input)' -o - --format \(format) --no-effects --crf 0 | cat > '\(output)'")
            XCTAssertEqual(result.status, 0, "\(format): \(result.stderr)")
            XCTAssertFalse(result.stderr.contains("\r"), format)
            XCTAssertEqual(try frames(output), "\(codec),12", format)
            XCTAssertEqual(try Tool.frameMD5s(output), try Tool.frameMD5s(reference), "\(format): lossless, the same frames")
        }
        let both = scratch.path("both.mkv")
        let result = try pipeline("cat '\(scratch.path("o.nut"))' | $velvet render - -o - --format matroska --no-effects --quiet | cat > '\(both)'")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try frames(both), "h264,12", "- to -: the same-file check does not take the two pipes for one file")
        XCTAssertFalse(scratch.files.contains { $0.contains("velvet-partial") }, "\(scratch.files)")
    }

    /// A video of one frame on standard input (whose length no index states) makes a picture,
    /// as ffmpeg's does (it was refused as "several frames"); one of more frames is still refused.
    func testOneFrameOnStandardInputMakesAPicture() throws {
        let scratch = try Scratch()
        for (frames, status) in [(1, Int32(0)), (3, Int32(1))] {
            let input = scratch.path("in\(frames).y4m"), output = scratch.path("out\(frames).png")
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10", "-frames:v", "\(frames)", "-pix_fmt", "yuv420p", input])
            let result = try pipeline("$velvet render - -o '\(output)' --no-effects --quiet < '\(input)'")
            XCTAssertEqual(result.status, status, "\(frames): \(result.stderr)")
            XCTAssertEqual(FileManager.default.fileExists(atPath: output), status == 0, "\(frames)")
            if status != 0 { XCTAssertTrue(result.stderr.contains("- is a video (several frames)"), result.stderr) }
        }
    }

    /// Pictures FFmpeg reads only from a file it can seek in: on standard input the message
    /// says so and what to do (it called an intact TIFF "truncated or damaged"); by name they render.
    func testPicturesFFmpegCannotReadFromAPipeSaySo() throws {
        let scratch = try Scratch()
        for format in ["tiff", "exr"] {
            let input = scratch.path("in.\(format)"), output = scratch.path("out.png")
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1", input])
            let piped = try pipeline("$velvet render - -o '\(output)' -y --no-effects --quiet < '\(input)'")
            XCTAssertEqual(piped.status, 1, piped.stderr)
            XCTAssertEqual(piped.stderr, "velvet: error: cannot decode standard input: FFmpeg cannot read a \(format) picture from a pipe: "
                           + "pass the file by name\n")
            let named = try pipeline("$velvet render '\(input)' -o '\(output)' -y --no-effects --quiet")
            XCTAssertEqual(named.status, 0, named.stderr)
        }
    }

    /// A closed standard input or output (`<&-`, `>&-`) is refused by name (it was "Invalid
    /// argument"), and no file Velvet opens takes its descriptor: the render to a file, with
    /// both closed, writes its output and nothing else.
    func testClosedStandardStreamsAreRefusedByName() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.mkv"), output = scratch.path("out.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10", "-frames:v", "3", "-c:v", "ffv1", input])
        for (script, message) in [
            ("$velvet render - -o '\(output)' --no-effects <&-", "the input is - but standard input is closed"),
            ("$velvet render '\(input)' -o - --format matroska --no-effects >&-", "-o - writes video to standard output, which is closed"),
            ("$velvet render '\(input)' -o '\(output)' --json --no-effects >&-", "--json prints to standard output, which is closed"),
        ] {
            let result = try pipeline(script)
            XCTAssertEqual(result.status, 2, "\(script): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix("velvet: \(message)"), result.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        }
        // Any command's text to a closed standard output fails as a write there (it was lost).
        let listed = try pipeline("$velvet presets list >&-")
        XCTAssertEqual(listed.status, 1, listed.stderr)
        XCTAssertEqual(listed.stderr, "velvet: error: cannot write to standard output: Bad file descriptor\n")
        let closed = try pipeline("$velvet render '\(input)' -o '\(output)' --quiet <&- >&-")
        XCTAssertEqual(closed.status, 0, closed.stderr)
        let written = try frames(output)
        XCTAssertTrue(written.hasSuffix(",3"), written)
        XCTAssertEqual(scratch.files, ["in.mkv", "out.mkv"])
    }

    /// A reader that closes the pipe before text output ends (`--help | head -1`) took what it
    /// wanted: the command ends quietly with 0 (it said "error: cannot write to standard
    /// output: Broken pipe", exit 1). Video to a closed pipe stays an error (below).
    func testTextToAClosedPipeEndsQuietly() throws {
        for command in ["$velvet render --help", "$velvet presets list", "$velvet help"] {
            let result = try pipeline("\(command) | (exec 0<&-; sleep 1)")
            XCTAssertEqual(result.status, 0, "\(command): \(result.stderr)")
            XCTAssertEqual(result.stderr, "", command)
        }
    }

    /// `--json` prints to standard output: where that is the input (`>> in.mp4`) or the output,
    /// a usage error, and nothing is written there, the error's own JSON neither (the summary
    /// was appended to the input, exit 0).
    func testTheSummaryIsNotWrittenIntoTheCommandsFiles() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10", "-frames:v", "3", "-c:v", "libx264", input])
        let before = try Data(contentsOf: URL(fileURLWithPath: input))
        let result = try pipeline("$velvet render '\(input)' -o '\(scratch.path("out.mkv"))' --json --no-effects --quiet >> '\(input)'")
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("--json prints to standard output, which is the input"), result.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: input)), before, "the input is untouched")
        // The pipe the video goes to, named as /dev/stdout: the summary would go into the video.
        let named = try pipeline("$velvet render '\(input)' -o /dev/stdout -y --format matroska --json --no-effects --quiet "
                                 + "| cat > '\(scratch.path("piped.mkv"))'")
        XCTAssertEqual(named.status, 2, named.stderr)
        XCTAssertTrue(named.stderr.contains("--json prints to standard output, which is -o /dev/stdout"), named.stderr)
    }

    /// A damaged input rendered to standard output: the frames before the damage were already
    /// sent, and the message says so (it said "nothing was written" over a stream that held them).
    func testDamageOnAStreamSaysWhatWasSent() throws {
        let scratch = try Scratch()
        let whole = scratch.path("whole.mkv"), cut = scratch.path("cut.mkv"), output = scratch.path("out.y4m")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x64:rate=25", "-frames:v", "30", "-c:v", "ffv1", whole])
        let data = try Data(contentsOf: URL(fileURLWithPath: whole))
        try data.prefix(data.count * 6 / 10).write(to: URL(fileURLWithPath: cut))
        let result = try pipeline("$velvet render '\(cut)' -o - --format y4m --no-effects --quiet | cat > '\(output)'")
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("was already sent to standard output, which ends there"), result.stderr)
        XCTAssertFalse(result.stderr.contains("nothing was written"), result.stderr)
        XCTAssertGreaterThan(try Data(contentsOf: URL(fileURLWithPath: output)).count, 0, "what was sent stays")
    }

    /// A reader that goes away (`| head -c 1000`): one line, exit 1, no crash or SIGPIPE death.
    func testAClosedPipeIsOneLineAndExitOne() throws {
        let scratch = try Scratch()
        let input = scratch.path("long.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "8", "-c:v", "libx264", "-preset", "ultrafast", input])
        // SVT-AV1 too, which must be ended before it is closed (else it hangs or complains).
        for codec in ["--preset-x264 ultrafast", "--codec libsvtav1"] {
            let result = try pipeline("$velvet render '\(input)' -o - --format nut --no-effects --quiet \(codec) | head -c 1000 > /dev/null")
            XCTAssertEqual(result.status, 1, "\(codec): \(result.stderr)")
            XCTAssertEqual(messages(result), ["velvet: error: cannot write standard output: the pipe was closed by the program reading it"], codec)
        }
    }

    /// `-o -` and `-` where they cannot work: usage errors (exit 2) in one line, before any
    /// work, and nothing on stdout (it belongs to the video).
    func testStreamsWhereTheyCannotWorkAreUsageErrors() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x64:rate=25", "-frames:v", "3", "-c:v", "libx264", input])
        let original = try Data(contentsOf: URL(fileURLWithPath: input))
        let cases: [(String, String)] = [
            ("$velvet render '\(input)' -o - --no-effects > /dev/null", "-o - needs --format matroska, nut, mpegts or y4m"),
            ("$velvet render '\(input)' -o - --format mp4 --no-effects > /dev/null", "--format mp4 cannot stream to standard output"),
            ("$velvet render '\(input)' -o - --format nut --json --no-effects | cat > /dev/null",
             "--json prints to standard output, which -o - fills with the video"),
            ("$velvet render '\(input)' -o - --format nut --codec libx264 --crf 99 --json | cat", "--crf must be an integer"),
            ("$velvet render '\(input)' -o - --format nut --no-effects >> '\(input)'", "-o - is the input \(input): it would be overwritten"),
            ("$velvet analyze - < '\(input)'", "the input - (standard input) works only with velvet render"),
            ("$velvet batch - --output-dir '\(scratch.path("out"))' < '\(input)'", "input - (standard input) works only with velvet render"),
            // `-` as a folder or a name prefix (a folder named -, files named --bilateral.rgba were made).
            ("cd '\(scratch.url.path)' && $velvet luts export -", "luts export DIR -: - is standard input or output"),
            ("cd '\(scratch.url.path)' && $velvet bench skin --width 4 --height 4 --output -", "--output -: - is standard input or output"),
            ("cd '\(scratch.url.path)' && $velvet bench media --work-dir -", "--work-dir -: - is standard input or output"),
            ("cd '\(scratch.url.path)' && $velvet batch in.mkv --output-dir -", "--output-dir -: - is standard input or output"),
            ("cd '\(scratch.url.path)' && $velvet demo --output-dir -", "--output-dir -: - is standard input or output"),
        ]
        for (script, mentions) in cases {
            let result = try pipeline(script)
            XCTAssertEqual(result.status, 2, "\(script): \(result.stderr)")
            XCTAssertEqual(messages(result).count, 1, "\(script): one line: \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(mentions), "\(script): \(result.stderr)")
            XCTAssertEqual(result.stdout, "", "\(script): no JSON or text on the video's stdout")
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: input)), original, "the input is untouched")
        XCTAssertEqual(scratch.files, ["in.mkv"])
    }

    /// A terminal is no place for video, nor a source of it: `script` gives the command one.
    func testATerminalOnEitherEndIsAUsageError() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x64:rate=25", "-frames:v", "3", "-c:v", "libx264", input])
        for (command, mentions) in [("render '\(input)' -o - --format nut --no-effects",
                                     "-o - writes video to standard output, which is a terminal: pipe or redirect it"),
                                    ("render - -o '\(scratch.path("out.mkv"))' --no-effects",
                                     "the input is - but standard input is a terminal"),
                                    ("batch --list - --output-dir '\(scratch.path("out"))' --no-effects",
                                     "--list - reads standard input, which is a terminal: pipe the list in")] {
            let result = try Tool.run("/usr/bin/script", ["-qec", "\(Tool.velvet) \(command)", "/dev/null"])
            XCTAssertEqual(result.status, 2, "\(command): \(result.stdout)")
            XCTAssertTrue(result.stdout.contains(mentions), "\(command): \(result.stdout)")
        }
        XCTAssertEqual(scratch.files, ["in.mkv"])
    }

    func testBatchReadsItsListFromStandardInput() throws {
        let scratch = try Scratch()
        for name in ["a", "b"] {
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x64:rate=25", "-frames:v", "4", "-c:v", "libx264", scratch.path("\(name).mkv")])
        }
        let result = try pipeline("printf '%s\\n' '\(scratch.path("a.mkv"))' '# a comment' '\(scratch.path("b.mkv"))' | "
                                  + "$velvet batch --list - --output-dir '\(scratch.path("out"))' --no-effects --quiet")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.hasPrefix("batch: 2 of 2 input(s)"), result.stdout)
        for name in ["a", "b"] { XCTAssertEqual(try frames(scratch.path("out/\(name).mp4")), "h264,4", name) }
    }
}
