import Foundation
import VelvetFiles
@testable import VelvetMedia
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

        // --framerate, as ffmpeg's -framerate; only for a sequence.
        let fast = scratch.path("fast.mkv")
        XCTAssertEqual(try Tool.run(Tool.velvet, ["render", pattern, "-o", fast, "--framerate", "30000/1001", "--no-effects", "--quiet"]).status, 0)
        XCTAssertEqual(try Tool.probe(fast, "stream=r_frame_rate"), "30000/1001")
        for (input, rate) in [(pattern, "0"), (pattern, "fast"), (video, "30")] {
            let refused = try Tool.run(Tool.velvet, ["render", input, "-o", scratch.path("x.mkv"), "--framerate", rate, "--no-effects"])
            XCTAssertEqual(refused.status, 2, "\(input) \(rate): \(refused.stderr)")
        }

        let still = scratch.path("third.png")
        XCTAssertEqual(try Tool.run(Tool.velvet, ["render", pattern, "-o", still, "--frame", "2", "--no-effects", "--quiet"]).status, 0)
        XCTAssertEqual(try Tool.pixels(still, "rgb24"), try Tool.pixels(scratch.path("seq/img003.png"), "rgb24"))
    }

    /// A sequence ends at its first gap, whatever lies beyond it: image2 probes for the last
    /// number in doubling steps (1, 2, 4, 8, ...), which can land past a gap, and reading the
    /// missing file then failed the render as damage (3, 7 or 11 files and one more after the
    /// gap; 4, 5 or 6 were read right).
    func testASequenceEndsAtItsFirstGap() throws {
        let scratch = try Scratch()
        for count in [3, 4, 7, 11] {
            let pattern = try makeSequence(in: scratch, frames: count + 2)
            try FileManager.default.removeItem(atPath: scratch.path(String(format: "seq/img%03d.png", count + 1)))
            let video = scratch.path("gap\(count).mkv")
            let result = try Tool.run(Tool.velvet, ["render", pattern, "-o", video, "--no-effects", "--codec", "ffv1", "--quiet"])
            XCTAssertEqual(result.status, 0, "\(count) files before the gap: \(result.stderr)")
            XCTAssertFalse(result.stderr.contains("warning") || result.stderr.contains("error"), "\(count): \(result.stderr)")
            let frames = try Tool.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                                  "stream=nb_read_frames", "-of", "csv=p=0", video]).stdout
            XCTAssertEqual(frames.trimmingCharacters(in: .whitespacesAndNewlines), "\(count)", "\(count) files, \(count) frames")
            try FileManager.default.removeItem(atPath: scratch.path("seq"))
        }
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

        // A damaged picture in the middle: counted as such (it said "truncated after 4 frames"),
        // and with --allow-truncated the others are kept, the video keeping the gap in time.
        try FileManager.default.createDirectory(atPath: scratch.path("dmg"), withIntermediateDirectories: true)
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64:rate=25", "-frames:v", "5", scratch.path("dmg/img%03d.png")])
        let damaged = scratch.path("dmg/img%03d.png")
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: scratch.path("dmg/img003.png")))
        let refused = try Tool.run(Tool.velvet, ["render", damaged, "-o", scratch.path("gap.mkv"), "--no-effects", "--quiet"])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("1 of its 5 pictures do not decode"), refused.stderr)
        let kept = try Tool.run(Tool.velvet, ["render", damaged, "-o", scratch.path("gap.mkv"), "--no-effects", "--quiet", "--allow-truncated"])
        XCTAssertEqual(kept.status, 0, kept.stderr)
        XCTAssertTrue(kept.stderr.contains("1 of its 5 pictures do not decode") && kept.stderr.contains("kept the 4 that do"), kept.stderr)
        XCTAssertEqual(try Tool.probe(scratch.path("gap.mkv"), "packet=pts_time").split(separator: "\n").compactMap { Double($0) }.sorted(),
                       [0, 0.04, 0.12, 0.16])
        try FileManager.default.removeItem(atPath: scratch.path("gap.mkv"))
        // A PNG cut short in its last chunk, and a JPEG named .png, in the middle of three: no
        // error reached the reader and the picture was dropped, exit 0 (three rendered as two).
        try FileManager.default.createDirectory(atPath: scratch.path("mid"), withIntermediateDirectories: true)
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120", "-frames:v", "1", scratch.path("mid/face.png")])
        try Tool.ffmpeg(["-i", scratch.path("mid/face.png"), scratch.path("mid/face.jpg")])
        let face = try Data(contentsOf: URL(fileURLWithPath: scratch.path("mid/face.png")))
        for number in [1, 3] { try face.write(to: URL(fileURLWithPath: scratch.path("mid/e000\(number).png"))) }
        for (name, bytes) in [("cut", face.prefix(face.count * 85 / 100)), ("jpeg", try Data(contentsOf: URL(fileURLWithPath: scratch.path("mid/face.jpg"))))] {
            try bytes.write(to: URL(fileURLWithPath: scratch.path("mid/e0002.png")))
            let silent = try Tool.run(Tool.velvet, ["render", scratch.path("mid/e%04d.png"), "-o", scratch.path("\(name).mkv"), "--no-effects", "--quiet"])
            XCTAssertEqual(silent.status, 1, "\(name): \(silent.stderr)")
            XCTAssertTrue(silent.stderr.contains("1 of its 3 pictures do not decode"), "\(name): \(silent.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.path("\(name).mkv")), name)
        }

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

    // MARK: Sequences out

    /// `-o f%03d.png` writes one picture a frame, numbered from 1 as ffmpeg's image2 does,
    /// each the same bytes as that frame's still render (`--frame N`); an existing first
    /// file is refused without -y; a sequence named over its input is refused.
    func testVideoIsWrittenAsASequence() throws {
        let scratch = try Scratch()
        let video = scratch.path("in.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64:rate=25", "-frames:v", "6", "-c:v", "ffv1", video])
        try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: true)
        let pattern = scratch.path("out/f%03d.png")
        let result = try Tool.run(Tool.velvet, ["render", video, "-o", pattern, "--no-effects", "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path("out")).sorted(),
                       (1...6).map { String(format: "f%03d.png", $0) })
        for frame in [0, 3, 5] {
            let still = scratch.path("still\(frame).png")
            XCTAssertEqual(try Tool.run(Tool.velvet, ["render", video, "-o", still, "--frame", "\(frame)", "--no-effects", "--quiet"]).status, 0)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: scratch.path(String(format: "out/f%03d.png", frame + 1)))),
                           try Data(contentsOf: URL(fileURLWithPath: still)), "frame \(frame)")
        }
        let again = try Tool.run(Tool.velvet, ["render", video, "-o", pattern, "--no-effects", "--quiet"])
        XCTAssertEqual(again.status, 1, again.stderr)
        XCTAssertTrue(again.stderr.contains("f001.png exists (use -y to overwrite)"), again.stderr)
        XCTAssertEqual(try Tool.run(Tool.velvet, ["render", video, "-o", pattern, "--no-effects", "--quiet", "-y"]).status, 0)

        let frame = try Tool.run(Tool.velvet, ["render", video, "-o", scratch.path("g%03d.png"), "--frame", "1", "--no-effects"])
        XCTAssertEqual(frame.status, 2, frame.stderr)
        XCTAssertTrue(frame.stderr.contains("is an image sequence"), frame.stderr)
        try FileManager.default.copyItem(atPath: scratch.path("out/f002.png"), toPath: scratch.path("p002.png"))
        let over = try Tool.run(Tool.velvet, ["render", scratch.path("p002.png"), "-o", scratch.path("p%03d.png"), "-y", "--no-effects"])
        XCTAssertEqual(over.status, 2, over.stderr)
        XCTAssertTrue(over.stderr.contains("would overwrite the input"), over.stderr)
        XCTAssertFalse(scratch.files.contains("p001.png"))
    }

    /// A render stopped by SIGTERM while writing a sequence leaves none of its files and no
    /// partial: the frames are renamed into place only when the render finishes.
    func testInterruptedSequenceLeavesNoFile() throws {
        let scratch = try Scratch()
        let video = scratch.path("long.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25", "-frames:v", "400", "-c:v", "ffv1", video])
        try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: true)
        let render = try Tool.start(Tool.velvet, ["render", video, "-o", scratch.path("out/f%04d.png"), "--no-effects", "--quiet"])
        let outFiles = { (try? FileManager.default.contentsOfDirectory(atPath: scratch.path("out"))) ?? [] }
        XCTAssertTrue(Tool.waitUntil { outFiles().filter { $0.contains(".velvet-partial") }.count >= 3 }, "no frames written")
        let stopped = render.stop(with: SIGTERM)
        XCTAssertEqual(stopped.status, 143, stopped.stderr)
        XCTAssertEqual(outFiles(), [], "nothing left in the output folder")
    }

    /// A report beside a sequence is named without the frame number (compare's default names).
    func testStemOfAPattern() {
        XCTAssertEqual(ImageSequence.stem(of: "/a/ab_%03d.png"), "/a/ab.png")
        XCTAssertEqual(ImageSequence.stem(of: "/a/%d.png"), "/a/sequence.png")
        XCTAssertEqual(ImageSequence.stem(of: "/a/x%dy.png"), "/a/xy.png")
        XCTAssertEqual(ImageSequence.name("/a/ab_%03d.png", 7), "/a/ab_007.png")
        XCTAssertEqual(ImageSequence.number(of: "/a/ab_007.png", in: "/a/ab_%03d.png", same: ==), 7)
        XCTAssertNil(ImageSequence.number(of: "/a/ab_7.png", in: "/a/ab_%03d.png", same: ==))
    }

    /// What a sweep found: a frame name linked to an input, two spellings of one sequence, a
    /// report named like a frame, a pattern wider than FFmpeg writes, a file in the way of a
    /// later frame (all or none are moved), a name too long for a later frame, batch naming an
    /// output after a literal `%03d` name, absurd rates.
    func testSequenceOutputsMeetNothingElse() throws {
        let scratch = try Scratch()
        let pattern = try makeSequence(in: scratch, frames: 5)
        try FileManager.default.createSymbolicLink(atPath: scratch.path("seq/s003.png"), withDestinationPath: "img004.png")
        let original = try Data(contentsOf: URL(fileURLWithPath: scratch.path("seq/img004.png")))
        let video = scratch.path("v.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64:rate=25", "-frames:v", "5", "-c:v", "ffv1", video])
        try FileManager.default.createDirectory(atPath: scratch.path("o"), withIntermediateDirectories: true)
        for arguments in [["render", pattern, "-o", scratch.path("seq/s%03d.png"), "-y", "--no-effects"],
                          ["analyze", video, "--overlay", scratch.path("o/a%03d.png"), "--mask", scratch.path("o/a%3d.png")],
                          ["analyze", video, "--overlay", scratch.path("o/c%03d.png"), "--tracks", scratch.path("o/c001.png")],
                          ["compare", video, "-o", scratch.path("o/x%02d.png"), "--report", scratch.path("o/x01.png")],
                          ["render", video, "-o", scratch.path("o/w%025d.png"), "--no-effects"],
                          ["render", pattern, "-o", scratch.path("o/r.mkv"), "--framerate", "1e9", "--no-effects"],
                          ["render", pattern, "-o", scratch.path("o/r.mkv"), "--framerate", "1/2147483647", "--no-effects"]] {
            let result = try Tool.run(Tool.velvet, arguments)
            XCTAssertEqual(result.status, 2, "\(arguments): \(result.stderr)")
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: scratch.path("seq/img004.png"))), original)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path("o")), [])

        // A file at frame 4 (past the first files checked up front): nothing is moved into place.
        try Data("keep".utf8).write(to: URL(fileURLWithPath: scratch.path("o/f04.png")))
        let blocked = try Tool.run(Tool.velvet, ["render", video, "-o", scratch.path("o/f%02d.png"), "--no-effects", "--quiet"])
        XCTAssertEqual(blocked.status, 1, blocked.stderr)
        XCTAssertTrue(blocked.stderr.contains("f04.png exists"), blocked.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path("o")), ["f04.png"])
        // Frame 10's name is one byte too long: refused when it is reached, nothing moved.
        let long = scratch.path("o/" + String(repeating: "c", count: 250) + "%d.png")
        let tooLong = try Tool.run(Tool.velvet, ["render", video, "-o", long, "--no-effects", "--quiet"])
        XCTAssertEqual(tooLong.status, 0, "frames 1-5 fit: \(tooLong.stderr)")
        let longVideo = scratch.path("long.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64:rate=25", "-frames:v", "10", "-c:v", "ffv1", longVideo])
        try FileManager.default.createDirectory(atPath: scratch.path("p"), withIntermediateDirectories: true)
        let failed = try Tool.run(Tool.velvet, ["render", longVideo, "-o", scratch.path("p/" + String(repeating: "c", count: 250) + "%d.png"),
                                                "--no-effects", "--quiet"])
        XCTAssertEqual(failed.status, 1, failed.stderr)
        XCTAssertTrue(failed.stderr.contains("longer than 255 bytes"), failed.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path("p")), [])

        try FileManager.default.copyItem(atPath: scratch.path("seq/img001.png"), toPath: scratch.path("lit%03d.png"))
        let batch = try Tool.run(Tool.velvet, ["batch", scratch.path("lit%03d.png"), "--output-dir", scratch.path("b"), "--no-effects"])
        XCTAssertEqual(batch.status, 2, batch.stderr)
        XCTAssertTrue(batch.stderr.contains("holds a frame number pattern"), batch.stderr)
    }

    /// A frame name the pattern's own digits run into (`gh1%d.jpg` names frame 1 `gh11.jpg`)
    /// is found up front: the input was refused only after the whole render, exit 1.
    func testAFrameWhoseDigitsTouchThePatternsIsFoundUpFront() throws {
        let scratch = try Scratch()
        let input = scratch.path("gh11.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64", "-frames:v", "1", input])
        let result = try Tool.run(Tool.velvet, ["render", input, "-o", scratch.path("gh1%d.png"), "-y", "--no-effects"])
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("would overwrite the input \(input)"), result.stderr)
        XCTAssertEqual(ImageSequence.number(of: "gh11.png", in: "gh1%d.png", same: ==), 1)
        XCTAssertEqual(ImageSequence.number(of: "a0071b.png", in: "a%03d1b.png", same: ==), 7)
        XCTAssertNil(ImageSequence.number(of: "gh12.png", in: "gh1%d3.png", same: ==))
    }

    /// A sequence's JPEG cut short is left out as a picture that does not decode (it was kept,
    /// green below the cut, under a warning that counted frames wrongly).
    func testACutJPEGInASequenceIsLeftOut() throws {
        let scratch = try Scratch()
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-frames:v", "6", scratch.path("c%02d.jpg")])
        let third = URL(fileURLWithPath: scratch.path("c03.jpg"))
        let bytes = try Data(contentsOf: third)
        try bytes.prefix(bytes.count / 2).write(to: third)
        let refused = try Tool.run(Tool.velvet, ["render", scratch.path("c%02d.jpg"), "-o", scratch.path("r.mkv"), "--codec", "ffv1", "--no-effects"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("1 of its 6 pictures do not decode (a picture's JPEG data ends before its end-of-image marker)"),
                      refused.stderr)
        let kept = try Tool.run(Tool.velvet, ["render", scratch.path("c%02d.jpg"), "-o", scratch.path("k.mkv"), "--codec", "ffv1", "--no-effects",
                                              "--allow-truncated"])
        XCTAssertEqual(kept.status, 0, kept.stderr)
        XCTAssertTrue(kept.messages.contains("kept the 5 that do"), kept.stderr)
        let counted = try Tool.run("ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0",
                                               scratch.path("k.mkv")]).stdout
        XCTAssertEqual(counted.trimmingCharacters(in: .whitespacesAndNewlines), "5")
    }

    /// Two renders to one sequence: the second to claim it is refused while the first holds it
    /// (two renders with -y started together both exited 0, their frames mixed); once the
    /// first is done, the sequence is free again.
    func testASequenceHasOneWriterAtATime() throws {
        let scratch = try Scratch()
        let pattern = scratch.path("m%02d.png")
        let first = try PictureSequenceOutput(pattern: pattern, policy: .replace, input: nil)
        XCTAssertThrowsError(try PictureSequenceOutput(pattern: pattern, policy: .replace, input: nil)) { error in
            XCTAssertTrue("\(error)".contains("is being written by velvet process \(getpid())"), "\(error)")
        }
        first.discard()
        XCTAssertEqual(scratch.files, [], "the claim goes with the sequence")
        let second = try PictureSequenceOutput(pattern: pattern, policy: .replace, input: nil)
        try second.commit()
        XCTAssertEqual(scratch.files, [])
    }

    /// y4m has no tag for the YUV matrix and its readers take BT.601: RGB is converted with it
    /// (it was BT.709: ffmpeg read the colours back up to 124 levels off).
    func testRGBIntoY4MUsesBT601() throws {
        let scratch = try Scratch()
        let picture = scratch.path("in.png"), y4m = scratch.path("out.y4m")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64", "-frames:v", "1", picture])
        XCTAssertEqual(try Tool.run(Tool.velvet, ["render", picture, "-o", y4m, "--no-effects", "--pix-fmt", "yuv444p", "--quiet"]).status, 0)
        let source = try Tool.pixels(picture, "rgb24"), back = try Tool.pixels(y4m, "rgb24")
        XCTAssertEqual(source.count, back.count)
        let worst = zip(source, back).map { abs(Int($0) - Int($1)) }.max() ?? 255
        XCTAssertLessThanOrEqual(worst, 3, "read back as ffmpeg reads y4m (BT.601)")
    }

    /// A sequence's frames get the single file's partial rules: a live velvet writing one of
    /// them refuses a second render (two renders mixed their frames, both exit 0); a dead
    /// writer's partials are removed. A `%03d` in a folder's name only is no sequence.
    func testSequencePartialsAndFolderNames() throws {
        let scratch = try Scratch()
        let video = scratch.path("v.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64:rate=25", "-frames:v", "3", "-c:v", "ffv1", video])
        try FileManager.default.createDirectory(atPath: scratch.path("o"), withIntermediateDirectories: true)
        // A partial of frame 2 left by a process that is gone.
        let stale = scratch.path("o/.f0002.png.velvet-partial-999999999")
        try Data("old".utf8).write(to: URL(fileURLWithPath: stale))
        let result = try Tool.run(Tool.velvet, ["render", video, "-o", scratch.path("o/f%04d.png"), "--no-effects", "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path("o")).sorted(), ["f0001.png", "f0002.png", "f0003.png"])
        // A live velvet writing a frame: a long render, stopped once the second is refused.
        let long = scratch.path("long.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25", "-frames:v", "400", "-c:v", "ffv1", long])
        try FileManager.default.createDirectory(atPath: scratch.path("p"), withIntermediateDirectories: true)
        let first = try Tool.start(Tool.velvet, ["render", long, "-o", scratch.path("p/g%04d.png"), "--no-effects", "--quiet"])
        let folder = scratch.path("p")
        let listing = { (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] }
        XCTAssertTrue(Tool.waitUntil { listing().contains { $0.contains(".velvet-partial") } }, "the first render never started")
        let second = try Tool.run(Tool.velvet, ["render", video, "-o", scratch.path("p/g%04d.png"), "--no-effects", "--quiet", "-y"])
        XCTAssertEqual(second.status, 1, second.stderr)
        XCTAssertTrue(second.stderr.contains("is being written by velvet process"), second.stderr)
        XCTAssertEqual(first.stop(with: SIGTERM).status, 143)
        XCTAssertEqual(listing(), [])
        // A folder named with %03d: the picture goes there by its own name.
        try FileManager.default.createDirectory(atPath: scratch.path("bo%03d"), withIntermediateDirectories: true)
        let still = scratch.path("one.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64", "-frames:v", "1", still])
        XCTAssertEqual(try Tool.run(Tool.velvet, ["render", still, "-o", scratch.path("bo%03d/out.png"), "--no-effects", "--quiet"]).status, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path("bo%03d")), ["out.png"])
        XCTAssertEqual(try Tool.run(Tool.velvet, ["batch", still, "--output-dir", scratch.path("bo%03d"), "--no-effects", "--quiet"]).status, 0)
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: scratch.path("bo%03d")).contains("one.png"))
    }
}
