import Foundation
import VelvetTestSupport
import XCTest

/// `--codec` by FFmpeg encoder name, `--encoder-opt`, and the pixel format that follows the
/// encoder: every listed encoder Debian's FFmpeg has renders a tiny clip that decodes with
/// the right codec, profile, pixel format and frame count. What cannot work is refused
/// before decoding, in one line, with nothing written.
final class EncoderTests: XCTestCase {
    private func clip(_ scratch: Scratch, size: String = "64x64") throws -> String {
        let path = scratch.path("in-\(size).mkv")
        if !FileManager.default.fileExists(atPath: path) {
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=\(size):rate=25", "-frames:v", "5", "-c:v", "libx264", path])
        }
        return path
    }

    private func stream(_ path: String) throws -> [String] {
        try Tool.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                 "-show_entries", "stream=codec_name,profile,pix_fmt,nb_read_frames", "-of", "csv=p=0", path])
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").map(String.init)
    }

    func testEveryListedEncoderRendersAndDecodes() throws {
        let scratch = try Scratch()
        // (arguments, output, input size, codec, profile, pixel format as decoded)
        let cases: [([String], String, String, String, String, String)] = [
            (["--codec", "h264"], "h264.mp4", "64x64", "h264", "High", "yuv420p"),
            (["--codec", "libx264", "--pix-fmt", "yuv444p"], "x264-444.mkv", "64x64", "h264", "High 4:4:4 Predictive", "yuv444p"),
            (["--codec", "hevc"], "hevc.mp4", "64x64", "hevc", "Main", "yuv420p"),
            (["--codec", "libx265", "--pix-fmt", "yuv422p10le"], "x265-422.mkv", "64x64", "hevc", "Rext", "yuv422p10le"),
            // ProRes takes only 10-bit 4:2:2 and 4:4:4: 4:2:0 input becomes 4:2:2 HQ.
            (["--codec", "prores_ks"], "prores.mov", "64x64", "prores", "HQ", "yuv422p10le"),
            // FFmpeg's ProRes decoder returns 4444 as 12-bit.
            (["--codec", "prores_ks", "--encoder-opt", "profile=4444", "--pix-fmt", "yuv444p10le"], "prores4444.mov", "64x64",
             "prores", "4444", "yuv444p12le"),
            // DNxHR takes any size from 256x120; HQX is 10-bit.
            (["--codec", "dnxhd", "--encoder-opt", "profile=dnxhr_hq"], "dnxhr-hq.mov", "256x120", "dnxhd", "DNXHR HQ", "yuv422p"),
            (["--codec", "dnxhd", "--encoder-opt", "profile=dnxhr_hqx", "--pix-fmt", "yuv422p10le"], "dnxhr-hqx.mov", "256x120",
             "dnxhd", "DNXHR HQX", "yuv422p10le"),
            (["--codec", "ffv1"], "ffv1.mkv", "64x64", "ffv1", "unknown", "yuv420p"),
            (["--codec", "ffv1", "--pix-fmt", "yuv444p"], "ffv1-444.mkv", "64x64", "ffv1", "unknown", "yuv444p"),
            (["--codec", "libsvtav1"], "svtav1.mkv", "64x64", "av1", "Main", "yuv420p"),
            (["--codec", "libaom-av1", "--encoder-opt", "cpu-used=8"], "aom.mkv", "64x64", "av1", "Main", "yuv420p"),
            // MPEG-1/2 take only listed frame rates: the encoder's time base is 1/rate, not the input stream's.
            (["--codec", "mpeg2video"], "mpeg2.mkv", "64x64", "mpeg2video", "Main", "yuv420p"),
            (["--codec", "mpeg2video"], "mpeg2.mpg", "64x64", "mpeg2video", "Main", "yuv420p"),
            (["--codec", "mpeg1video"], "mpeg1.mpg", "64x64", "mpeg1video", "unknown", "yuv420p"),
        ]
        for (arguments, name, size, codec, profile, pixelFormat) in cases {
            let output = scratch.path(name)
            let result = try Tool.run(Tool.velvet, ["render", try clip(scratch, size: size), "-o", output, "--no-effects", "--quiet"] + arguments)
            XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)")
            XCTAssertEqual(result.stderr.split(separator: "\n").filter { !$0.hasPrefix("velvet: validation layer on") }, [],
                           "\(arguments): nothing on stderr (x265, SVT-AV1 and libaom keep their logs to themselves)")
            XCTAssertEqual(try stream(output), [codec, profile, pixelFormat, "5"], "\(arguments)")
        }
    }

    /// A palette PNG renders with default options (the encoder's format is one swscale can
    /// write: not pal8), and a picture's encoder takes --encoder-opt.
    func testPalettePicturesRenderAndPictureEncodersTakeOptions() throws {
        let scratch = try Scratch()
        let palette = scratch.path("palette.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x64", "-frames:v", "1", "-pix_fmt", "pal8", palette])
        XCTAssertEqual(try Tool.probe(palette, "stream=pix_fmt"), "pal8")
        let result = try Tool.run(Tool.velvet, ["render", palette, "-o", scratch.path("out.png"), "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try Tool.probe(scratch.path("out.png"), "stream=pix_fmt"), "rgba")
        var sizes: [Int] = []
        for level in ["0", "9"] {
            let output = scratch.path("level\(level).png")
            let rendered = try Tool.run(Tool.velvet, ["render", palette, "-o", output, "--no-effects", "--encoder-opt", "compression_level=\(level)"])
            XCTAssertEqual(rendered.status, 0, rendered.stderr)
            sizes.append(try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int ?? 0)
        }
        XCTAssertGreaterThan(sizes[0], sizes[1], "compression_level reached the PNG encoder")
        // In a batch too, where no --codec claims the options for the videos; one the picture's
        // encoder lacks is a usage error there as well.
        var batchSizes: [Int] = []
        for level in ["0", "9"] {
            let folder = scratch.path("batch\(level)")
            let batch = try Tool.run(Tool.velvet, ["batch", palette, "--output-dir", folder, "--no-effects", "--encoder-opt", "compression_level=\(level)"])
            XCTAssertEqual(batch.status, 0, batch.stderr)
            batchSizes.append(try FileManager.default.attributesOfItem(atPath: folder + "/palette.png")[.size] as? Int ?? 0)
        }
        XCTAssertEqual(batchSizes, sizes, "the batch's pictures are encoded as render encodes them")
        let unknown = try Tool.run(Tool.velvet, ["batch", palette, "--output-dir", scratch.path("bad"), "--no-effects", "--encoder-opt", "nosuch=1"])
        XCTAssertEqual(unknown.status, 2, unknown.stderr)
        XCTAssertTrue(unknown.stderr.contains("png has no option 'nosuch'"), unknown.stderr)
    }

    /// A container that holds no H.264 gets its own encoder when none is asked for, as with
    /// ffmpeg: a picture to .webp and .gif, a clip to .webm; no muxer's refusal is printed.
    /// `--encoder-opt b=` or `qp=` rate-controls x264 and x265 (Velvet's crf won over both:
    /// the same bytes as without them).
    func testABitrateOrQPGivenWinsOverTheCRF() throws {
        let scratch = try Scratch()
        let input = try clip(scratch, size: "160x120")
        var sizes: [String: Int] = [:]
        for (name, options) in [("crf", [String]()), ("b", ["--encoder-opt", "b=20k"]), ("qp", ["--encoder-opt", "qp=45"])] {
            let output = scratch.path("\(name).mp4")
            let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--no-effects", "--quiet"] + options)
            XCTAssertEqual(result.status, 0, result.stderr)
            sizes[name] = (try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
        }
        XCTAssertLessThan(sizes["b"] ?? .max, (sizes["crf"] ?? 0) / 2, "\(sizes)")
        XCTAssertLessThan(sizes["qp"] ?? .max, (sizes["crf"] ?? 0) / 2, "\(sizes)")
        // x265's banner stays off with the user's own x265-params.
        let x265 = try Tool.run(Tool.velvet, ["render", input, "-o", scratch.path("x265.mp4"), "--no-effects", "--quiet", "--codec", "libx265",
                                              "--encoder-opt", "x265-params=keyint=10"])
        XCTAssertEqual(x265.status, 0, x265.stderr)
        XCTAssertEqual(x265.stderr.split(separator: "\n").filter { !$0.hasPrefix("velvet: validation layer on") }, [], "quiet")
    }

    /// Encoders that pace their rate control by the time base get 1/rate, as ffmpeg gives them
    /// (they had the input's): from an MP4 (1/12800) VC-2 lost 20 dB, MPEG-4's `b=2M` got a
    /// third of the bits it got from the same frames in a TS, and FLV in SWF failed to open.
    func testRateControlIsPacedByTheFrameRate() throws {
        let scratch = try Scratch()
        let mp4 = scratch.path("in.mp4"), ts = scratch.path("in.ts")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-frames:v", "8", "-pix_fmt", "yuv420p", "-c:v", "libx264",
                         "-crf", "10", mp4])
        try Tool.ffmpeg(["-i", mp4, "-c", "copy", ts])
        let sizes = try [mp4, ts].map { input -> Double in
            let output = input + ".mkv"
            let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--codec", "mpeg4", "--encoder-opt", "b=2M", "--no-effects", "--quiet"])
            XCTAssertEqual(result.status, 0, result.stderr)
            return Double((try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0)
        }
        XCTAssertEqual(sizes[0], sizes[1], accuracy: 0.1 * sizes[1], "the same bits from either container")
        let vc2 = scratch.path("vc2.mkv"), swf = scratch.path("flv.swf")
        XCTAssertEqual(try Tool.run(Tool.velvet, ["render", mp4, "-o", vc2, "--codec", "vc2", "--no-effects", "--quiet"]).status, 0)
        XCTAssertGreaterThan(try Tool.psnr(mp4, vc2), 50, "VC-2's default is near lossless")
        let flash = try Tool.run(Tool.velvet, ["render", mp4, "-o", swf, "--codec", "flv", "--no-effects", "--quiet"])
        XCTAssertEqual(flash.status, 0, flash.stderr)
        XCTAssertEqual(try stream(swf).last, "8")
    }

    func testContainersWithoutH264TakeTheirOwnEncoder() throws {
        let scratch = try Scratch()
        let picture = scratch.path("still.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x64", "-frames:v", "1", picture])
        // A raw stream's file is its codec's (.hevc was written with H.264 inside, unreadable as HEVC).
        for (input, name, codec) in [(picture, "still.webp", "webp"), (picture, "still.gif", "gif"), (try clip(scratch), "clip.webm", "vp9"),
                                     (try clip(scratch), "clip.hevc", "hevc"), (try clip(scratch), "clip.mjpeg", "mjpeg"),
                                     (try clip(scratch), "clip.m2v", "mpeg2video"), (try clip(scratch), "clip.h264", "h264")] {
            let result = try Tool.run(Tool.velvet, ["render", input, "-o", scratch.path(name), "--no-effects", "--quiet"])
            XCTAssertEqual(result.status, 0, "\(name): \(result.stderr)")
            XCTAssertEqual(result.stderr.split(separator: "\n").filter { !$0.hasPrefix("velvet: validation layer on") }, [], "\(name): quiet")
            XCTAssertEqual(try stream(scratch.path(name)).first, codec, name)
        }
    }

    /// batch names its outputs for the encoder: .mov for ProRes (MP4 cannot hold it), .mkv
    /// for FFV1, the format's own extension with --format.
    func testBatchOutputsTakeAContainerThatHoldsTheCodec() throws {
        let scratch = try Scratch()
        let input = try clip(scratch)
        for (arguments, name, codec) in [(["--codec", "prores_ks"], "in-64x64.mov", "prores"), (["--codec", "ffv1"], "in-64x64.mkv", "ffv1"),
                                         (["--format", "nut"], "in-64x64.nut", "h264"), ([], "in-64x64.mp4", "h264")] {
            let directory = scratch.path("out-\(name)")
            let result = try Tool.run(Tool.velvet, ["batch", input, "--output-dir", directory, "--no-effects", "--quiet"] + arguments)
            XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory).filter { !$0.hasPrefix(".") }, [name], "\(arguments)")
            XCTAssertEqual(try stream(directory + "/" + name).first, codec, "\(arguments)")
        }
        // A picture in the batch keeps its extension's encoder: the video encoder and its options are the videos'.
        let picture = scratch.path("still.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x64", "-frames:v", "1", picture])
        let directory = scratch.path("out-mixed")
        let mixed = try Tool.run(Tool.velvet, ["batch", input, picture, "--output-dir", directory, "--no-effects", "--quiet", "--codec", "ffv1",
                                               "--encoder-opt", "level=3"])
        XCTAssertEqual(mixed.status, 0, mixed.stderr)
        XCTAssertEqual(try stream(directory + "/in-64x64.mkv").first, "ffv1")
        XCTAssertEqual(try stream(directory + "/still.png").first, "png")
    }

    /// NVENC is in Debian's FFmpeg; without NVIDIA hardware it fails in one line before any
    /// decoding, naming the missing library. (Where the hardware exists, it must encode.)
    func testNVENCWithoutHardwareFailsInOneLine() throws {
        let scratch = try Scratch()
        for (codec, name) in [("h264_nvenc", "h264"), ("hevc_nvenc", "hevc")] {
            let output = scratch.path("\(codec).mp4")
            let result = try Tool.run(Tool.velvet, ["render", try clip(scratch, size: "256x144"), "-o", output, "--no-effects", "--quiet",
                                                    "--codec", codec])
            if result.status == 0 {
                XCTAssertEqual(try stream(output).first, name, "\(codec) on a machine with NVENC")
                continue
            }
            XCTAssertEqual(result.status, 1, result.stderr)
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "one line: \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix("velvet: error: cannot encode: the \(codec) encoder cannot start: "), result.stderr)
            XCTAssertTrue(result.stderr.contains("(NVENC needs an NVIDIA GPU with its driver)"), result.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: output))
        }
        XCTAssertFalse(scratch.files.contains { $0.contains("velvet-partial") }, "\(scratch.files)")
    }

    /// A wrong encoder, option, value or pairing: one line, nothing written. Usage errors
    /// (exit 2) are found from the command line alone; what needs the input's size or the
    /// container's answer is refused before decoding (exit 1).
    func testWhatCannotWorkIsRefusedBeforeDecoding() throws {
        let scratch = try Scratch()
        let input = try clip(scratch)
        let cases: [([String], String, Int32, String)] = [
            (["--codec", "nosuch"], "x.mkv", 2, "there is no encoder 'nosuch' in this FFmpeg build"),
            (["--codec", "aac"], "x.mkv", 2, "aac is not a video encoder"),
            (["--codec", "prores_ks", "--encoder-opt", "speed=9"], "x.mov", 2, "prores_ks has no option 'speed'"),
            (["--codec", "prores_ks", "--encoder-opt", "profile=ultra"], "x.mov", 2, "prores_ks refuses --encoder-opt profile=ultra: "),
            (["--codec", "libx264", "--encoder-opt", "tune"], "x.mkv", 2, "--encoder-opt takes KEY=VALUE, got 'tune'"),
            (["--codec", "ffv1", "--crf", "10"], "x.mkv", 2, "--crf tunes libx264 and libx265; for ffv1 use --encoder-opt"),
            (["--frame", "3"], "x.mp4", 2, "--frame 3 picks the frame of a still output (.png, .jpg); "),
            (["--codec", "prores_ks", "--pix-fmt", "yuv420p"], "x.mov", 2, "pixel format 'yuv420p' for prores_ks; it takes yuv422p10le"),
            (["--codec", "prores_ks"], "x.mp4", 1, "the mp4 format cannot hold prores video (prores_ks); use .mkv or .mov"),
            (["--codec", "ffv1"], "x.mov", 1, "the mov format cannot hold ffv1 video (ffv1); use .mkv"),
            // In MOV's codec list, refused by its header: asked with the stream's parameters
            // (SVT-AV1 would never return from a failed open).
            (["--codec", "libsvtav1"], "x.mov", 1, "the mov format cannot hold av1 video (libsvtav1); use .mp4 or .mkv"),
            (["--codec", "dnxhd", "--encoder-opt", "profile=dnxhr_hq"], "x.mov", 1,
             "the dnxhd encoder cannot start: Input dimensions too small, input must be at least 256x120"),
            (["--codec", "dnxhd"], "x.mov", 1, "the dnxhd encoder cannot start: video parameters incompatible with DNxHD"),
            // x264 and x265 print their refusals themselves, past av_log: one line still, theirs the reason.
            (["--encoder-opt", "profile=baseline", "--pix-fmt", "yuv444p"], "x.mp4", 1,
             "the libx264 encoder cannot start: x264 [error]: baseline profile doesn't support 4:4:4"),
            (["--codec", "libx265", "--encoder-opt", "x265-params=keyint=-3"], "x.mp4", 1,
             "the libx265 encoder cannot start: x265 [error]: Invalid max IDR period in frames"),
        ]
        for (arguments, name, status, mentions) in cases {
            let output = scratch.path(name)
            let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--no-effects", "--quiet"] + arguments)
            XCTAssertEqual(result.status, status, "\(arguments): \(result.stderr)")
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "\(arguments): one line: \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(mentions), "\(arguments): \(result.stderr) should say \(mentions)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: output), "\(arguments): nothing written")
        }
        XCTAssertEqual(scratch.files, ["in-64x64.mkv"], "no partial files")
    }
}
