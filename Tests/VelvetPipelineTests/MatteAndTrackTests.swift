import Foundation
import VelvetTestSupport
import XCTest

/// `render --matte / --matte-zones / --matte-in / --tracks` and `analyze --tracks` end to end,
/// with the shipped default preset, on Grace Hopper's photo and a six-frame clip of it.
final class MatteAndTrackTests: XCTestCase {
    private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    private var photo: String { repository.appendingPathComponent("test-assets/grace_hopper.jpg").path }
    private static let size = (width: 256, height: 300)

    @discardableResult
    private func velvet(_ arguments: [String], status: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) throws -> Tool.Result {
        let result = try Tool.run(Tool.velvet, arguments + ["--quiet"],
                                  environment: ["VELVET_VALIDATION": "1", "VELVET_MODELS_DIR": repository.appendingPathComponent("models").path])
        XCTAssertEqual(result.status, status, "velvet \(arguments.joined(separator: " ")): \(result.stderr)", file: file, line: line)
        return result
    }

    /// The error line of a failed command: exactly one `velvet: error:` line.
    private func errorLine(_ result: Tool.Result, file: StaticString = #filePath, line: UInt = #line) -> String {
        let lines = result.stderr.split(separator: "\n").filter { $0.hasPrefix("velvet: error:") }
        XCTAssertEqual(lines.count, 1, result.stderr, file: file, line: line)
        return lines.first.map(String.init) ?? ""
    }

    private func still(_ scratch: Scratch) throws -> String {
        let path = scratch.path("grace.png")
        try Tool.ffmpeg(["-i", photo, "-vf", "scale=\(Self.size.width):\(Self.size.height)", path])
        return path
    }

    /// Six frames at 24 fps, in MP4 (which declares its frame count).
    private func clip(_ scratch: Scratch) throws -> String {
        let path = scratch.path("clip.mp4")
        try Tool.ffmpeg(["-loop", "1", "-framerate", "24", "-t", "0.25", "-i", photo,
                         "-vf", "scale=\(Self.size.width):\(Self.size.height),setsar=1,format=yuv420p", "-c:v", "libx264", "-crf", "12", path])
        return path
    }

    /// 16-bit grey values of frame `index` of a matte.
    private func greys(_ path: String, frame index: Int = 0) throws -> [UInt16] {
        let data = try Tool.run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", path, "-vf", "select=eq(n\\,\(index))",
                                           "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray16le", "-"]).output
        XCTAssertEqual(data.count, Self.size.width * Self.size.height * 2, "\(path) frame \(index)")
        return data.withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)).map { UInt16(littleEndian: $0) } }
    }

    /// Frames decoded (not what the container declares).
    private func frameCount(_ path: String) throws -> Int {
        Int(try Tool.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames",
                                     "-of", "csv=p=0", path]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    private func packetTimes(_ path: String) throws -> [String] {
        try Tool.probe(path, "packet=pts_time").split(separator: "\n").map(String.init).sorted { Double($0)! < Double($1)! }
    }

    // MARK: Mattes out

    /// The matte is the weight the blend applied: the same values `--debug-view mask` draws.
    /// The debug view is an 8-bit RGB picture of that weight sampled through a bilinear
    /// sampler at pixel centres, the matte the 16-bit weight image itself; so they agree to
    /// one 8-bit step (half a step of rounding, and the sampler's sub-texel weights, which
    /// lavapipe keeps to 8 bits, mixing in up to 1/256 of a neighbour's difference), and
    /// where either is 0 the other is too.
    func testStillMatteIsTheDebugMaskViewsWeight() throws {
        let scratch = try Scratch()
        let input = try still(scratch)
        try velvet(["render", input, "-o", scratch.path("out.png"), "--matte", scratch.path("matte.png")])
        try velvet(["render", input, "-o", scratch.path("mask.png"), "--debug-view", "mask"])
        XCTAssertEqual(try Tool.probe(scratch.path("matte.png"), "stream=pix_fmt,width,height"), "256,300,gray16be")
        let matte = try greys(scratch.path("matte.png"))
        let view = [UInt8](try Tool.pixels(scratch.path("mask.png"), "rgb24"))
        XCTAssertEqual(view.count, matte.count * 3)
        var worst = 0.0, sum = 0.0, covered = 0, zerosDisagree = 0
        for (index, value) in matte.enumerated() {
            let drawn = Double(view[index * 3])
            let difference = abs(Double(value) / 65535 * 255 - drawn)
            worst = max(worst, difference)
            sum += difference
            if value > 0 { covered += 1 }
            if (value == 0) != (drawn == 0) && difference > 0.5 { zerosDisagree += 1 }
        }
        XCTAssertGreaterThan(covered, 3000, "the face's skin is in the matte")
        XCTAssertLessThanOrEqual(worst, 1.0, "within one 8-bit step of the debug view")
        XCTAssertLessThan(sum / Double(matte.count), 0.3, "on average within 8-bit rounding")
        XCTAssertEqual(zerosDisagree, 0)
        XCTAssertEqual(matte[0], 0, "the background's weight is 0")
    }

    /// A video's matte (and zone map) has the render's frames and timestamps, FFV1 16-bit grey;
    /// its first frame is the debug view's (a still render of frame 0 tracks it as the video does).
    func testVideoMatteIsFrameSynchronous() throws {
        let scratch = try Scratch()
        let input = try clip(scratch)
        try velvet(["render", input, "-o", scratch.path("out.mkv"), "--matte", scratch.path("matte.mkv"),
                    "--matte-zones", scratch.path("zones.mkv"), "--preset-x264", "ultrafast"])
        for matte in ["matte.mkv", "zones.mkv"] {
            XCTAssertEqual(try Tool.probe(scratch.path(matte), "stream=codec_name,pix_fmt"), "ffv1,gray16le", matte)
            XCTAssertEqual(try frameCount(scratch.path(matte)), 6, matte)
            XCTAssertEqual(try packetTimes(scratch.path(matte)), try packetTimes(scratch.path("out.mkv")), "\(matte): the render's timestamps")
        }
        XCTAssertEqual(try frameCount(scratch.path("out.mkv")), 6)
        for index in 0..<6 {
            let weights = try greys(scratch.path("matte.mkv"), frame: index), zones = try greys(scratch.path("zones.mkv"), frame: index)
            XCTAssertGreaterThan(weights.filter { $0 > 0 }.count, 3000, "frame \(index) has the face's weight")
            // The blend weight is skin x zone x gain: no weight without a zone.
            XCTAssertEqual(zip(weights, zones).filter { $0.0 > 0 && $0.1 == 0 }.count, 0, "frame \(index)")
        }
        try velvet(["render", input, "-o", scratch.path("mask0.png"), "--frame", "0", "--debug-view", "mask"])
        let view = [UInt8](try Tool.pixels(scratch.path("mask0.png"), "rgb24"))
        let first = try greys(scratch.path("matte.mkv"), frame: 0)
        let worst = first.indices.map { abs(Double(first[$0]) / 65535 * 255 - Double(view[$0 * 3])) }.max() ?? .infinity
        XCTAssertLessThanOrEqual(worst, 1.0, "frame 0 within one 8-bit step of the debug view")
        XCTAssertFalse(scratch.files.contains { $0.hasPrefix(".") }, "no partial files: \(scratch.files)")
    }

    /// A file whose clock starts late (here 10 s in) starts at zero in the render, and so in its
    /// matte (the matte kept the input's 10 s: out of step with the render by time).
    func testVideoMatteOfALateStartingFileStartsWithTheRender() throws {
        let scratch = try Scratch()
        let late = scratch.path("late.mkv")
        try Tool.ffmpeg(["-i", try clip(scratch), "-c", "copy", "-output_ts_offset", "10", late])
        try velvet(["render", late, "-o", scratch.path("out.mkv"), "--matte", scratch.path("matte.mkv"), "--preset-x264", "ultrafast"])
        let times = try packetTimes(scratch.path("out.mkv"))
        XCTAssertEqual(times.first.flatMap(Double.init), 0, "the render starts at zero")
        XCTAssertEqual(try packetTimes(scratch.path("matte.mkv")), times, "the matte has the render's timestamps")
    }

    func testMatteOptionsAreCheckedBeforeWork() throws {
        let scratch = try Scratch()
        let input = try still(scratch), video = try clip(scratch)
        let cases: [([String], String)] = [
            (["render", video, "-o", scratch.path("a.mkv"), "--matte", scratch.path("m.png")], "holds one picture"),
            (["render", video, "-o", scratch.path("a.mkv"), "--matte", scratch.path("m.mp4")], "cannot hold FFV1"),
            (["render", input, "-o", scratch.path("a.png"), "--matte", scratch.path("m.mkv")], "use a .png"),
            (["render", input, "-o", scratch.path("a.png"), "--matte", input], "would be overwritten"),
            (["render", input, "-o", scratch.path("a.png"), "--matte", scratch.path("a.png")], "are the same file"),
            (["render", input, "-o", scratch.path("a.png"), "--matte", scratch.path("m.png"), "--no-effects"], "leave out --no-effects"),
            (["render", input, "-o", scratch.path("a.png"), "--matte", scratch.path("m.png"), "--debug-view", "mask"], "--debug-view"),
            (["render", "-", "-o", scratch.path("a.mkv"), "--matte", scratch.path("m.mkv")], "--matte needs an input file, not -"),
            (["render", "-", "-o", scratch.path("a.mkv"), "--tracks", scratch.path("t.json")], "--tracks needs an input file, not -"),
            (["render", video, "-o", "-", "--format", "matroska", "--matte", scratch.path("m.mkv")], "not -o - (standard output)"),
        ]
        for (arguments, message) in cases {
            let result = try velvet(arguments, status: 2)
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        // -n / no -y: an existing matte is not overwritten, and nothing is rendered.
        try Data("keep".utf8).write(to: URL(fileURLWithPath: scratch.path("m.png")))
        _ = try velvet(["render", input, "-o", scratch.path("a.png"), "--matte", scratch.path("m.png")], status: 1)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: scratch.path("m.png"))), Data("keep".utf8))
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.path("a.png")))
        try velvet(["render", input, "-o", scratch.path("a.png"), "--matte", scratch.path("m.png"), "-y"])
        XCTAssertEqual(try Tool.probe(scratch.path("m.png"), "stream=pix_fmt"), "gray16be")
        XCTAssertEqual(scratch.files, ["a.png", "clip.mp4", "grace.png", "m.png"])
    }

    /// A render stopped by SIGTERM while writing its matte leaves neither file, nor a partial.
    func testInterruptedRenderLeavesNoMatte() throws {
        let scratch = try Scratch()
        let long = scratch.path("long.mp4")
        try Tool.ffmpeg(["-loop", "1", "-framerate", "24", "-t", "10", "-i", photo,
                         "-vf", "scale=\(Self.size.width):\(Self.size.height),setsar=1,format=yuv420p", "-c:v", "libx264", "-preset", "ultrafast", long])
        let render = try Tool.start(Tool.velvet, ["render", long, "-o", scratch.path("out.mkv"), "--matte", scratch.path("matte.mkv"),
                                                  "--preset-x264", "ultrafast", "--quiet"],
                                    environment: ["VELVET_MODELS_DIR": repository.appendingPathComponent("models").path])
        XCTAssertTrue(Tool.waitUntil { scratch.files.contains { $0.hasPrefix(".matte.mkv.velvet-partial") } }, "the matte was never started")
        let stopped = render.stop(with: SIGTERM)
        XCTAssertEqual(stopped.status, 143, stopped.stderr)
        XCTAssertEqual(scratch.files, ["long.mp4"], "nothing left but the input")
    }

    // MARK: Mattes in

    /// An all-zero matte leaves the frame bit-exact, an all-one matte is the normal render, a
    /// half matte keeps its zero half bit-exact and renders the other as the normal render
    /// does (but within the reshape's reach of the edge, whose warp reads across it).
    func testMatteInZeroOneAndHalf() throws {
        let scratch = try Scratch()
        let input = try still(scratch)
        let size = "\(Self.size.width)x\(Self.size.height)"
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=black:s=\(size)", "-frames:v", "1", "-pix_fmt", "gray", scratch.path("zero.png")])
        // 16-bit grey at 65535 (geq: ffmpeg's own RGB white converts to 65277).
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=black:s=\(size)", "-frames:v", "1", "-vf", "format=gray16be,geq=lum=65535",
                         scratch.path("one.png")])
        // Alpha, not grey: the left half transparent over a white picture.
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=white:s=\(size)", "-frames:v", "1",
                         "-vf", "format=rgba,geq=r=255:g=255:b=255:a='if(lt(X\\,128)\\,0\\,255)'", scratch.path("half.png")])
        try velvet(["render", input, "-o", scratch.path("normal.png")])
        for matte in ["zero", "one", "half"] {
            try velvet(["render", input, "-o", scratch.path("\(matte)-out.png"), "--matte-in", scratch.path("\(matte).png")])
        }
        let original = [UInt8](try Tool.pixels(input, "rgb24")), normal = [UInt8](try Tool.pixels(scratch.path("normal.png"), "rgb24"))
        XCTAssertTrue(original != normal, "the default preset changes the face")
        XCTAssertTrue([UInt8](try Tool.pixels(scratch.path("zero-out.png"), "rgb24")) == original, "a zero matte changes nothing")
        XCTAssertTrue([UInt8](try Tool.pixels(scratch.path("one-out.png"), "rgb24")) == normal, "a one matte is the normal render")
        let half = [UInt8](try Tool.pixels(scratch.path("half-out.png"), "rgb24"))
        var changedLeft = 0, changedRightNormally = 0, differsFromNormal = 0
        for index in original.indices {
            let x = (index / 3) % Self.size.width
            if x < 128 {
                if half[index] != original[index] { changedLeft += 1 }
            } else {
                if normal[index] != original[index] { changedRightNormally += 1 }
                if x >= 128 + 8, half[index] != normal[index] { differsFromNormal += 1 }
            }
        }
        XCTAssertEqual(changedLeft, 0, "the matte's zero half is bit-exact")
        XCTAssertGreaterThan(changedRightNormally, 3000, "the face reaches the right half")
        XCTAssertEqual(differsFromNormal, 0, "the matte's one half is the normal render")
    }

    func testMatteInMustFitTheInput() throws {
        let scratch = try Scratch()
        let input = try still(scratch), video = try clip(scratch)
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=white:s=200x300", "-frames:v", "1", "-pix_fmt", "gray", scratch.path("small.png")])
        let small = try velvet(["render", input, "-o", scratch.path("a.png"), "--matte-in", scratch.path("small.png")], status: 1)
        XCTAssertTrue(errorLine(small).contains("the matte is 200x300 and the input 256x300"), small.stderr)
        // Named as the matte, not as the input being rendered.
        XCTAssertTrue(errorLine(small).contains("cannot use the matte \(scratch.path("small.png")): "), small.stderr)
        // A colour matte without alpha (a green roto) was read by its red channel alone: refused.
        // RGB whose channels agree is grey, and read.
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=0x00FF00:s=256x300", "-frames:v", "1", "-pix_fmt", "rgb24", scratch.path("green.png")])
        let green = try velvet(["render", input, "-o", scratch.path("a.png"), "--matte-in", scratch.path("green.png")], status: 1)
        XCTAssertTrue(errorLine(green).contains("is in colour (its red, green and blue differ)"), green.stderr)
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=white:s=256x300", "-frames:v", "1", "-pix_fmt", "rgb24", scratch.path("white.png")])
        _ = try velvet(["render", input, "-o", scratch.path("white-out.png"), "--matte-in", scratch.path("white.png")])
        // Fewer frames than the input: an MP4 declares its count (refused before rendering),
        // a Matroska file does not (the render fails where the matte ends; nothing is written).
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=white:s=256x300:r=24", "-frames:v", "4", "-pix_fmt", "yuv420p", "-c:v", "libx264",
                         scratch.path("short.mp4")])
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=white:s=256x300:r=24", "-frames:v", "4", "-pix_fmt", "gray16le", "-c:v", "ffv1",
                         scratch.path("short.mkv")])
        let declared = try velvet(["render", video, "-o", scratch.path("a.mkv"), "--matte-in", scratch.path("short.mp4")], status: 1)
        XCTAssertTrue(errorLine(declared).contains("the matte has 4 frames and the input 6"), declared.stderr)
        let ends = try velvet(["render", video, "-o", scratch.path("a.mkv"), "--matte-in", scratch.path("short.mkv")], status: 1)
        XCTAssertTrue(errorLine(ends).contains("the matte ends after 4 frame(s)"), ends.stderr)
        XCTAssertFalse(declared.stderr.contains("cannot render") || ends.stderr.contains("cannot render"), declared.stderr + ends.stderr)
        // A damaged matte is refused without offering --allow-truncated (which keeps what
        // decodes of the input, not of a matte), with it too.
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=256x300:r=24", "-frames:v", "6", "-pix_fmt", "gray16le", "-c:v", "ffv1",
                         scratch.path("whole.mkv")])
        let whole = try Data(contentsOf: URL(fileURLWithPath: scratch.path("whole.mkv")))
        try whole.prefix(whole.count * 2 / 3).write(to: URL(fileURLWithPath: scratch.path("cut.mkv")))
        for flags in [[], ["--allow-truncated"]] {
            let cut = try velvet(["render", video, "-o", scratch.path("a.mkv"), "--matte-in", scratch.path("cut.mkv")] + flags, status: 1)
            XCTAssertTrue(errorLine(cut).contains("a matte must decode whole"), cut.stderr)
            XCTAssertFalse(cut.stderr.contains("--allow-truncated"), cut.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.path("a.mkv")), "nothing written")
        XCTAssertFalse(scratch.files.contains { $0.hasPrefix(".") }, "no partial files: \(scratch.files)")
    }

    /// A video matte of as many frames, all 1 (16-bit FFV1), renders the video as without it.
    func testVideoMatteInOfOnesIsTheNormalRender() throws {
        let scratch = try Scratch()
        let video = try clip(scratch)
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=black:s=256x300:r=24", "-frames:v", "6", "-vf", "format=gray16le,geq=lum=65535",
                         "-c:v", "ffv1", scratch.path("ones.mkv")])
        let arguments = ["--crf", "0", "--preset-x264", "ultrafast"]
        try velvet(["render", video, "-o", scratch.path("normal.mkv")] + arguments)
        try velvet(["render", video, "-o", scratch.path("matted.mkv"), "--matte-in", scratch.path("ones.mkv")] + arguments)
        let normal = try Tool.frameMD5s(scratch.path("normal.mkv"))
        XCTAssertEqual(normal.split(separator: "\n").count, 6)
        XCTAssertNotEqual(normal, try Tool.frameMD5s(video), "the render changes the frames")
        XCTAssertEqual(try Tool.frameMD5s(scratch.path("matted.mkv")), normal)
    }

    /// Grey + alpha (`ya8`, `ya16be`): the alpha is the matte (they were refused as formats
    /// with no fourth component), so the render equals the one with the alpha as a grey matte.
    func testGreyAlphaMatteInIsItsAlpha() throws {
        let scratch = try Scratch()
        let input = try still(scratch)
        let grey = scratch.path("ramp.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=black:s=256x300", "-frames:v", "1", "-vf", "format=gray,geq=lum='X*255/W'", grey])
        for format in ["ya8", "ya16be"] {
            let matte = scratch.path("\(format).png"), alpha = scratch.path("\(format)-alpha.png")
            try Tool.ffmpeg(["-f", "lavfi", "-i", "color=white:s=256x300", "-i", grey, "-frames:v", "1",
                             "-filter_complex", "[0][1]alphamerge,format=\(format)", matte])
            XCTAssertEqual(try Tool.probe(matte, "stream=pix_fmt"), format)
            // Its alpha alone, as a grey picture of the same depth (taken from the decoded bytes:
            // ffmpeg's alphaextract shifts packed grey + alpha by a pixel).
            let bytes = try Tool.run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", matte, "-f", "rawvideo", "-pix_fmt", format, "-"]).output
            let width = format == "ya8" ? 1 : 2
            var alphaBytes = Data()
            for start in stride(from: width, to: bytes.count, by: 2 * width) { alphaBytes += bytes[start..<(start + width)] }
            try alphaBytes.write(to: URL(fileURLWithPath: scratch.path("alpha.raw")))
            try Tool.ffmpeg(["-f", "rawvideo", "-pix_fmt", format == "ya8" ? "gray" : "gray16be", "-s", "256x300", "-i", scratch.path("alpha.raw"), alpha])
            try velvet(["render", input, "-o", scratch.path("\(format)-out.png"), "--matte-in", matte])
            try velvet(["render", input, "-o", scratch.path("\(format)-grey.png"), "--matte-in", alpha])
            XCTAssertEqual(try Tool.pixels(scratch.path("\(format)-out.png"), "rgb24"), try Tool.pixels(scratch.path("\(format)-grey.png"), "rgb24"), format)
            XCTAssertNotEqual(try Tool.pixels(scratch.path("\(format)-out.png"), "rgb24"), try Tool.pixels(input, "rgb24"), "\(format): a render")
        }
    }

    /// VP9 in WebM carries alpha beside the picture (`alpha_mode` 1), which FFmpeg's own VP9
    /// decoder drops: the alpha is the matte (libvpx decodes it), not the white luma, so the
    /// render equals the one with the same half alpha in FFV1.
    func testVP9AlphaMatteInIsItsAlpha() throws {
        let scratch = try Scratch()
        let video = try clip(scratch)
        let half = "color=white@0.5:s=256x300:r=24,format=yuva420p"
        try Tool.ffmpeg(["-f", "lavfi", "-i", half, "-frames:v", "6", "-c:v", "libvpx-vp9", "-pix_fmt", "yuva420p", scratch.path("half.webm")])
        try Tool.ffmpeg(["-f", "lavfi", "-i", half, "-frames:v", "6", "-c:v", "ffv1", scratch.path("half.mkv")])
        let arguments = ["--crf", "0", "--preset-x264", "ultrafast"]
        try velvet(["render", video, "-o", scratch.path("normal.mkv")] + arguments)
        try velvet(["render", video, "-o", scratch.path("vp9.mkv"), "--matte-in", scratch.path("half.webm")] + arguments)
        try velvet(["render", video, "-o", scratch.path("ffv1.mkv"), "--matte-in", scratch.path("half.mkv")] + arguments)
        XCTAssertEqual(try Tool.frameMD5s(scratch.path("vp9.mkv")), try Tool.frameMD5s(scratch.path("ffv1.mkv")))
        XCTAssertNotEqual(try Tool.frameMD5s(scratch.path("vp9.mkv")), try Tool.frameMD5s(scratch.path("normal.mkv")), "half, not full")
    }

    /// A matte stored sideways with a display matrix (a phone's) is turned upright as the
    /// input is: the render equals the one with the same matte stored upright.
    func testMatteInIsTurnedByItsOwnDisplayMatrix() throws {
        let scratch = try Scratch()
        let video = try clip(scratch)
        let half = "color=black:s=256x300:r=24,format=gray,geq=lum='if(lt(X\\,128)\\,0\\,255)'"
        // PNG in MOV: lossless grey, and MOV carries the display matrix; the sideways copy is one
        // that ffmpeg's own autorotate shows as the upright matte.
        try Tool.ffmpeg(["-f", "lavfi", "-i", half, "-frames:v", "6", "-c:v", "png", scratch.path("upright.mov")])
        try Tool.ffmpeg(["-f", "lavfi", "-i", half + ",transpose=clock", "-frames:v", "6", "-c:v", "png", scratch.path("stored.mov")])
        try Tool.ffmpeg(["-i", scratch.path("stored.mov"), "-c", "copy", "-metadata:s:v:0", "rotate=90", scratch.path("sideways.mov")])
        XCTAssertEqual(try Tool.probe(scratch.path("sideways.mov"), "stream=width,height"), "300,256")
        let arguments = ["--crf", "0", "--preset-x264", "ultrafast"]
        try velvet(["render", video, "-o", scratch.path("normal.mkv")] + arguments)
        for matte in ["upright", "sideways"] {
            try velvet(["render", video, "-o", scratch.path("\(matte).mkv"), "--matte-in", scratch.path("\(matte).mov")] + arguments)
        }
        let upright = try Tool.frameMD5s(scratch.path("upright.mkv"))
        XCTAssertNotEqual(upright, try Tool.frameMD5s(scratch.path("normal.mkv")), "the half matte keeps half the frame")
        XCTAssertEqual(try Tool.frameMD5s(scratch.path("sideways.mkv")), upright)
    }

    // MARK: Tracks

    /// analyze --tracks, then render --tracks, gives the render's pixels exactly (a still and
    /// a lossless video), and every landmark is written as the Float it is.
    func testTracksRoundTripIsBitExact() throws {
        let scratch = try Scratch()
        let input = try still(scratch), video = try clip(scratch)
        let printed = try velvet(["analyze", input, "--tracks", scratch.path("still.json"), "--json"]).stdout
        let written = try String(contentsOfFile: scratch.path("still.json"), encoding: .utf8)
        XCTAssertEqual(printed, written, "--json prints the track file")
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(written.utf8)) as? [String: Any])
        XCTAssertEqual(document["format"] as? String, "velvet-tracks")
        XCTAssertEqual(document["version"] as? Int, 1)
        let frame = try XCTUnwrap((document["frames"] as? [[String: Any]])?.first)
        let coverage = try XCTUnwrap((frame["person"] as? [String: Any])?["coverage"] as? Double)
        XCTAssertTrue((0.2...0.95).contains(coverage), "the person covers much of the photo: \(coverage)")
        let landmarks = try XCTUnwrap((frame["faces"] as? [[String: Any]])?.first?["landmarks"] as? [[Double]])
        XCTAssertEqual(landmarks.count, 468)
        // Each landmark number as written is a Float exactly (read with Swift's correctly rounded
        // parser), and not one rounded to a few decimals.
        let start = try XCTUnwrap(written.range(of: "\"landmarks\":[")), end = try XCTUnwrap(written.range(of: "]]", range: start.upperBound..<written.endIndex))
        let numbers = written[start.upperBound..<end.lowerBound].split(whereSeparator: { "[],".contains($0) }).map { Double(String($0)) }
        XCTAssertEqual(numbers.count, 468 * 3)
        XCTAssertTrue(numbers.allSatisfy { $0.map { Double(Float($0)) == $0 } ?? false }, "each number is a Float exactly")
        XCTAssertTrue(numbers.contains { $0.map { ($0 * 1000).rounded() != $0 * 1000 } ?? false }, "not rounded to a few decimals")

        try velvet(["render", input, "-o", scratch.path("tracked.png")])
        try velvet(["render", input, "-o", scratch.path("played.png"), "--tracks", scratch.path("still.json")])
        let tracked = try Tool.pixels(scratch.path("tracked.png"), "rgb24")
        XCTAssertNotEqual(tracked, try Tool.pixels(input, "rgb24"))
        XCTAssertEqual(try Tool.pixels(scratch.path("played.png"), "rgb24"), tracked, "the still from its track file")

        try velvet(["analyze", video, "--tracks", scratch.path("clip.json")])
        try velvet(["render", video, "-o", scratch.path("tracked.mkv"), "--crf", "0", "--preset-x264", "ultrafast"])
        try velvet(["render", video, "-o", scratch.path("played.mkv"), "--crf", "0", "--preset-x264", "ultrafast",
                    "--tracks", scratch.path("clip.json")])
        let frames = try Tool.frameMD5s(scratch.path("tracked.mkv"))
        XCTAssertEqual(frames.split(separator: "\n").count, 6)
        XCTAssertEqual(try Tool.frameMD5s(scratch.path("played.mkv")), frames, "the video from its track file")
    }

    /// A face taken out of one frame of the track file changes that frame only (it comes out
    /// as decoded), and a bad track file is refused in one line before anything is written.
    func testEditedAndBrokenTrackFiles() throws {
        let scratch = try Scratch()
        let video = try clip(scratch)
        try velvet(["analyze", video, "--tracks", scratch.path("clip.json")])
        let text = try String(contentsOfFile: scratch.path("clip.json"), encoding: .utf8)
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        var frames = try XCTUnwrap(document["frames"] as? [[String: Any]])
        XCTAssertEqual(frames.count, 6)
        func write(_ name: String, _ change: (inout [String: Any]) -> Void) throws -> String {
            var edited = document
            change(&edited)
            try JSONSerialization.data(withJSONObject: edited).write(to: URL(fileURLWithPath: scratch.path(name)))
            return scratch.path(name)
        }

        frames[2]["faces"] = [[String: Any]]()
        let edited = try write("edited.json") { $0["frames"] = frames }
        let arguments = ["--crf", "0", "--preset-x264", "ultrafast"]
        try velvet(["render", video, "-o", scratch.path("full.mkv"), "--tracks", scratch.path("clip.json")] + arguments)
        try velvet(["render", video, "-o", scratch.path("edited.mkv"), "--tracks", edited] + arguments)
        let full = try Tool.frameMD5s(scratch.path("full.mkv")).split(separator: "\n")
        let changed = try Tool.frameMD5s(scratch.path("edited.mkv")).split(separator: "\n")
        let decoded = try Tool.frameMD5s(video).split(separator: "\n")
        XCTAssertEqual(full.count, 6)
        XCTAssertEqual(changed.count, 6)
        for index in 0..<6 where index != 2 { XCTAssertEqual(changed[index], full[index], "frame \(index) is as before") }
        XCTAssertNotEqual(changed[2], full[2], "frame 2 lost its face")
        XCTAssertEqual(changed[2], decoded[2], "frame 2 is the input's frame, untouched")

        frames = try XCTUnwrap(document["frames"] as? [[String: Any]])
        var face = try XCTUnwrap((frames[1]["faces"] as? [[String: Any]])?.first)
        face["landmarks"] = Array((face["landmarks"] as? [Any] ?? []).dropLast())
        var malformed = frames
        malformed[1]["faces"] = [face]
        var original = try XCTUnwrap((frames[1]["faces"] as? [[String: Any]])?.first)
        var collapsed = frames, crowded = frames
        original["landmarks"] = Array(repeating: [10.0, 10.0, 0.0], count: 468)
        collapsed[1]["faces"] = [original]
        crowded[1]["faces"] = (1...65).map { track -> [String: Any] in
            var copy = frames[1]["faces"].flatMap { ($0 as? [[String: Any]])?.first } ?? [:]
            copy["track"] = track
            return copy
        }
        let cases: [(String, String)] = [
            (try write("collapsed.json") { $0["frames"] = collapsed }, "frame 1, face 0: the face oval is under 4 px a side"),
            (try write("crowded.json") { $0["frames"] = crowded }, "frame 1: 65 faces, more than the 64 a frame can have"),
            (try write("v2.json") { $0["version"] = 2 }, "track file version 2 is not supported"),
            (try write("short.json") { $0["frames"] = Array(frames.dropLast()) }, "the track file has 5 frame(s) and the input 6"),
            (try write("points.json") { $0["frames"] = malformed }, "frame 1, face 0: \"landmarks\" must be 468 points"),
            (try write("size.json") { $0["width"] = 320 }, "the track file is for 320x300 frames"),
        ]
        // A face thousands of frames wide (the stages' work follows the face's size: it ran for
        // minutes), a repeated key, a version as text, numbers JSON has not.
        var huge = try XCTUnwrap((frames[1]["faces"] as? [[String: Any]])?.first)
        huge["landmarks"] = (huge["landmarks"] as? [[Double]] ?? []).map { [($0[0] - 128) * 8000 + 128, ($0[1] - 150) * 8000 + 150, $0[2]] }
        var giant = frames
        giant[1]["faces"] = [huge]
        let texts: [(String, String, String)] = [
            ("twice.json", "{\"height\": 300, " + text.drop { $0 != "{" }.dropFirst(), "\"height\" appears twice"),
            ("textversion.json", text.replacingOccurrences(of: "\"version\":1", with: "\"version\":\"1\""), "\"version\" must be an integer"),
            ("nan.json", String(text.dropLast(2)) + ", \"x\": NaN}", "not valid JSON"),
        ]
        var fileCases = cases + [(try write("giant.json") { $0["frames"] = giant }, "frame 1, face 0: the face oval is over 1200 px a side")]
        for (name, content, message) in texts {
            try Data(content.utf8).write(to: URL(fileURLWithPath: scratch.path(name)))
            fileCases.append((scratch.path(name), message))
        }
        XCTAssertTrue(text.contains("\"version\":1"), "the version as analyze writes it")
        for (path, message) in fileCases {
            let result = try velvet(["render", video, "-o", scratch.path("bad.mkv"), "--tracks", path], status: 1)
            XCTAssertTrue(errorLine(result).contains(message), "\(path): \(result.stderr)")
        }
        // A FIFO reads as the file does (as `--tracks <(…)` would).
        let fifo = scratch.path("tracks.fifo")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let feeder = Thread { try? Data(contentsOf: URL(fileURLWithPath: edited)).write(to: URL(fileURLWithPath: fifo)) }
        feeder.start()
        try velvet(["render", video, "-o", scratch.path("fifo.mkv"), "--tracks", fifo] + arguments)
        XCTAssertEqual(try Tool.frameMD5s(scratch.path("fifo.mkv")), try Tool.frameMD5s(scratch.path("edited.mkv")))
        try FileManager.default.removeItem(atPath: fifo)
        try FileManager.default.removeItem(atPath: scratch.path("fifo.mkv"))
        // Options that choose how faces are tracked do nothing with a track file's faces (they
        // were accepted silently); a --faces track the file lacks would treat nothing.
        for option in [["--look-ahead", "3"], ["--detector", "full"], ["--max-faces", "2"]] {
            let result = try velvet(["render", video, "-o", scratch.path("bad.mkv"), "--tracks", scratch.path("clip.json")] + option, status: 2)
            XCTAssertTrue(result.stderr.contains("\(option[0]) sets how faces are tracked"), result.stderr)
        }
        let absent = try velvet(["render", video, "-o", scratch.path("bad.mkv"), "--tracks", scratch.path("clip.json"), "--faces", "1,5"], status: 1)
        XCTAssertTrue(errorLine(absent).contains("--faces 5: no face of the file has that track (it has 1)"), absent.stderr)
        // Matroska states no frame count: a file with a frame more is found at the end, before
        // the output (and its matte) is moved into place.
        let unstated = scratch.path("clip.mkv")
        try Tool.ffmpeg(["-i", video, "-c", "copy", unstated])
        var longer = frames
        longer.append(frames[5])
        longer[6]["frame"] = 6
        let extra = try write("long.json") { $0["frames"] = longer }
        let late = try velvet(["render", unstated, "-o", scratch.path("bad.mkv"), "--tracks", extra, "--matte", scratch.path("bad-matte.mkv"),
                               "--preset-x264", "ultrafast"], status: 1)
        XCTAssertTrue(errorLine(late).contains("the track file has 7 frame(s) and the input 6"), late.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.path("bad-matte.mkv")), "no matte either")
        // Streamed to standard output the video cannot be taken back, but the render still fails
        // (it exited 0), and so does an image sequence (no frame is moved into place).
        let streamed = try Tool.run("/bin/bash", ["-c", "\(Tool.velvet) render '\(unstated)' -o - --format matroska --tracks '\(extra)' "
                                                      + "--quiet > '\(scratch.path("streamed.mkv"))'"],
                                    environment: ["VELVET_MODELS_DIR": repository.appendingPathComponent("models").path])
        XCTAssertEqual(streamed.status, 1, streamed.stderr)
        XCTAssertTrue(errorLine(streamed).contains("the track file has 7 frame(s) and the input 6"), streamed.stderr)
        try FileManager.default.createDirectory(atPath: scratch.path("seq"), withIntermediateDirectories: true)
        let sequence = try velvet(["render", unstated, "-o", scratch.path("seq/f%02d.png"), "--tracks", extra], status: 1)
        XCTAssertTrue(errorLine(sequence).contains("the track file has 7 frame(s) and the input 6"), sequence.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path("seq")), [])
        try Data("{\"format\": \"velvet-tracks\"".utf8).write(to: URL(fileURLWithPath: scratch.path("cut.json")))
        let cut = try velvet(["render", video, "-o", scratch.path("bad.mkv"), "--tracks", scratch.path("cut.json")], status: 1)
        XCTAssertTrue(errorLine(cut).contains("not a track file"), cut.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.path("bad.mkv")), "nothing written")
        XCTAssertFalse(scratch.files.contains { $0.hasPrefix(".") }, "no partial files: \(scratch.files)")
    }
}
