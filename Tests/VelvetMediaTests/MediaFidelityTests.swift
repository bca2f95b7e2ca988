import Foundation
import VelvetTestSupport
import XCTest

/// Nothing silently wrong, nothing lost: what the input holds beyond its pixels (orientation,
/// depth, colour tags, HDR metadata, field order, subtitles, chapters, audio, timing) reaches
/// the output, or is made right in the pixels where the container cannot carry it.
final class MediaFidelityTests: XCTestCase {
    private func render(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> Tool.Result {
        let result = try Tool.run(Tool.velvet, ["render"] + arguments + ["--preset-x264", "ultrafast", "--quiet"],
                                  environment: ["VELVET_VALIDATION": "1"])
        XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)", file: file, line: line)
        return result
    }

    /// Grey levels of the first frame (upright: ffmpeg applies a display matrix when there is one).
    private func grey(_ path: String) throws -> [UInt8] { [UInt8](try Tool.pixels(path, "gray")) }

    // MARK: Range and colour tags each encoder can hold

    /// Levels and tags where the encoder decides them, not the input: limited-range video to
    /// JPEG (full range by format) kept its levels, 16 for black, under a full-range tag;
    /// full-range video to encoders that hold only limited range (ProRes, WebP, TIFF's YCbCr,
    /// UtVideo) kept its levels, read darker and clipped; ProRes took no colour tags (its
    /// encoder reads them from the frame); RGB video was tagged `tv` with the input's YUV
    /// matrix; an unstated chroma siting was written as `left`. Compared with the input's own
    /// decoded levels, as ffmpeg's outputs keep them.
    func testRangeAndColourTagsFollowWhatEachEncoderHolds() throws {
        let scratch = try Scratch()
        let limited = scratch.path("tv.mp4"), full = scratch.path("pc.mp4"), pq = scratch.path("pq.mkv"), unsited = scratch.path("444.mkv")
        func render(_ arguments: [String]) throws { // no x264 here: no --preset-x264
            let result = try Tool.run(Tool.velvet, ["render"] + arguments + ["--no-effects", "--quiet"], environment: ["VELVET_VALIDATION": "1"])
            XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)")
        }
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=black:s=64x48,format=yuv420p", "-vf", "drawbox=x=32:y=0:w=32:h=48:color=white:t=fill",
                         "-frames:v", "1", "-color_range", "tv", "-colorspace", "bt709", "-c:v", "libx264", "-qp", "0", limited])
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=black:s=64x48", "-vf", "format=yuvj420p,geq=lum='if(lt(X\\,32)\\,40\\,220)':cb=128:cr=128",
                         "-frames:v", "1", "-pix_fmt", "yuvj420p", "-color_range", "pc", "-c:v", "libx264", "-qp", "0", full])
        for (input, output, options) in [(limited, "tv.jpg", [String]()), (full, "pc.tiff", []), (full, "pc.webp", []),
                                         (full, "pc.mov", ["--codec", "prores_ks"]), (full, "pc.avi", ["--codec", "utvideo"])] {
            let path = scratch.path(output)
            try render([input, "-o", path] + options)
            let (want, got) = (try grey(input), try grey(path))
            guard want.count == got.count else { XCTFail("\(output): \(got.count) pixels"); continue }
            let worst = zip(want, got).map { abs(Int($0) - Int($1)) }.max() ?? 255
            XCTAssertLessThanOrEqual(worst, 3, "\(output): levels \(got[0])/\(got[63]), the input's \(want[0])/\(want[63])")
        }
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-frames:v", "2", "-pix_fmt", "yuv420p10le", "-color_primaries", "bt2020",
                         "-color_trc", "smpte2084", "-colorspace", "bt2020nc", "-c:v", "ffv1", pq])
        try render([pq, "-o", scratch.path("pq.mov"), "--codec", "prores_ks"])
        XCTAssertEqual(try Tool.probe(scratch.path("pq.mov"), "stream=color_space,color_transfer,color_primaries"), "bt2020nc,smpte2084,bt2020")
        try render([limited, "-o", scratch.path("rgb.mkv"), "--codec", "ffv1", "--pix-fmt", "gbrp10le"])
        XCTAssertEqual(try Tool.probe(scratch.path("rgb.mkv"), "stream=color_range,color_space"), "pc,gbr")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120", "-frames:v", "2", "-pix_fmt", "yuv444p", "-c:v", "ffv1", unsited])
        try render([unsited, "-o", scratch.path("444-out.mkv"), "--codec", "ffv1"])
        XCTAssertEqual(try Tool.probe(scratch.path("444-out.mkv"), "stream=chroma_location"), "unspecified")
    }

    // MARK: Orientation

    func testRotationBecomesPixelsWhereTheContainerHasNoDisplayMatrix() throws {
        let scratch = try Scratch()
        let plain = scratch.path("plain.mp4"), rotated = scratch.path("rotated.mp4")
        // A white square in the stored frame's top-left corner.
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=black:size=192x108:rate=10", "-vf", "drawbox=x=0:y=0:w=24:h=24:color=white:t=fill",
                         "-t", "0.5", "-c:v", "libx264", "-crf", "0", plain])
        try Tool.ffmpeg(["-i", plain, "-c", "copy", "-metadata:s:v:0", "rotate=90", rotated])
        let upright = try grey(rotated) // 108x192, the square at the bottom left
        XCTAssertEqual(upright.count, 108 * 192)
        XCTAssertGreaterThan(upright[186 * 108 + 5], 200, "the reference itself: the square shows bottom left")
        for name in ["out.mkv", "out.avi"] {
            let output = scratch.path(name)
            _ = try render([rotated, "-o", output, "--no-effects"])
            XCTAssertEqual(try Tool.probe(output, "stream=width,height"), "108,192", "\(name) is stored upright")
            XCTAssertEqual(try Tool.probe(output, "stream_side_data=rotation"), "", "\(name) has no display matrix")
            let pixels = try grey(output)
            XCTAssertGreaterThan(pixels[186 * 108 + 5], 200, "\(name): the corner marker sits where players show it")
            XCTAssertLessThan(pixels[5 * 108 + 5], 50, "\(name): and not in the stored corner")
            XCTAssertLessThanOrEqual(zip(pixels, upright).map { abs(Int($0) - Int($1)) }.max() ?? 255, 8, name)
        }
    }

    /// A frame of a tagged video written as a PNG keeps its primaries and transfer as PNG's
    /// cHRM and gAMA chunks, as ffmpeg writes them (the PNG was untagged).
    func testAPictureOfATaggedVideoKeepsItsColourChunks() throws {
        let scratch = try Scratch()
        let input = scratch.path("bt709.mp4"), output = scratch.path("frame.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10", "-frames:v", "1", "-c:v", "libx264",
                         "-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709", input])
        _ = try render([input, "-o", output, "--no-effects"])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
        var chunks: [String] = [], offset = 8
        while offset + 8 <= bytes.count {
            let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            chunks.append(String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self))
            offset += 12 + length
        }
        XCTAssertTrue(chunks.contains("cHRM") && chunks.contains("gAMA"), "\(chunks)")
    }

    /// A display matrix that mirrors (a flip, a transpose) is read as ffmpeg's autorotation reads
    /// it: the Matroska output shows what players show (only the turn was read, so a flipped
    /// frame came out upside down, a transposed one turned without its mirror).
    func testMirroringDisplayMatricesBecomeThePixelsPlayersShow() throws {
        let scratch = try Scratch()
        let plain = scratch.path("plain.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=black:size=96x64:rate=10", "-vf", "drawbox=x=0:y=0:w=16:h=12:color=white:t=fill",
                         "-t", "0.2", "-c:v", "libx264", "-crf", "0", plain])
        let original = try Data(contentsOf: URL(fileURLWithPath: plain))
        let tkhd = try XCTUnwrap(original.range(of: Data("tkhd".utf8))).lowerBound - 4
        // The matrix's a, b, c, d (16.16 fixed point) at 48, 52, 60, 64 bytes into a version-0 tkhd.
        for (name, a, b, c, d) in [("hflip", -1, 0, 0, 1), ("vflip", 1, 0, 0, -1), ("transpose", 0, 1, 1, 0), ("transverse", 0, -1, -1, 0)] {
            var patched = original
            for (offset, value) in [(48, a), (52, b), (60, c), (64, d)] {
                withUnsafeBytes(of: Int32(value * 65536).bigEndian) { patched.replaceSubrange(tkhd + offset..<tkhd + offset + 4, with: $0) }
            }
            let input = scratch.path("\(name).mp4"), output = scratch.path("\(name).mkv")
            try patched.write(to: URL(fileURLWithPath: input))
            _ = try render([input, "-o", output, "--no-effects"])
            let shown = try grey(input), written = try grey(output)
            XCTAssertEqual(shown.count, written.count, name)
            XCTAssertLessThanOrEqual(zip(shown, written).map { abs(Int($0) - Int($1)) }.max() ?? 255, 8, name)
        }
    }

    func testEXIFOrientedPhotoBecomesAnUprightVideo() throws {
        let scratch = try Scratch()
        let plain = scratch.path("plain.jpg"), tagged = scratch.path("tagged.jpg"), output = scratch.path("out.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64", "-frames:v", "1", "-q:v", "2", plain])
        var jpeg = try Data(contentsOf: URL(fileURLWithPath: plain))
        jpeg.insert(contentsOf: ColorConversionTests.exifSegment(orientation: 6), at: 2)
        try jpeg.write(to: URL(fileURLWithPath: tagged))
        _ = try render([tagged, "-o", output, "--no-effects", "--crf", "0"])
        XCTAssertEqual(try Tool.probe(output, "stream=width,height"), "64,96", "orientation 6 turns the picture a quarter")
        XCTAssertEqual(try Tool.probe(output, "stream_side_data=rotation"), "")
        let turned = scratch.path("turned.png")
        try Tool.ffmpeg(["-i", plain, "-vf", "transpose=clock", turned])
        XCTAssertGreaterThan(try Tool.psnr(output, turned), 35, "the pixels are turned clockwise, as the tag says")
    }

    // MARK: Depth, colour, HDR

    func testTwelveBitPQVideoKeepsItsTagsDepthAndMasteringMetadata() throws {
        let scratch = try Scratch()
        let input = scratch.path("hdr.mkv")
        let display = "G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1)"
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-frames:v", "5", "-pix_fmt", "yuv420p12le",
                         "-c:v", "libx265", "-x265-params", "log-level=error:hdr10=1:master-display=\(display):max-cll=1000,400",
                         "-color_primaries", "bt2020", "-color_trc", "smpte2084", "-colorspace", "bt2020nc", input])
        let tags = "stream=color_primaries,color_transfer,color_space"
        XCTAssertEqual(try Tool.probe(input, tags), "bt2020nc,smpte2084,bt2020")

        // x264 takes 10 bits at most; Matroska keeps the metadata as stream side data.
        let mkv = scratch.path("out.mkv")
        _ = try render([input, "-o", mkv, "--no-effects"])
        XCTAssertEqual(try Tool.probe(mkv, tags), "bt2020nc,smpte2084,bt2020")
        XCTAssertEqual(try Tool.probe(mkv, "stream=pix_fmt"), "yuv420p10le")
        let sideData = try Tool.probe(mkv, "stream_side_data=side_data_type,max_content,max_average,max_luminance")
        XCTAssertTrue(sideData.contains("Mastering display metadata"), sideData)
        XCTAssertTrue(sideData.contains("Content light level metadata,1000,400"), sideData)

        // x265 keeps all 12 bits and writes the SEI; MP4 gets hvc1 and the metadata boxes.
        let mp4 = scratch.path("out.mp4")
        _ = try render([input, "-o", mp4, "--no-effects", "--codec", "hevc"])
        XCTAssertEqual(try Tool.probe(mp4, "stream=codec_tag_string,pix_fmt"), "hvc1,yuv420p12le")
        XCTAssertEqual(try Tool.probe(mp4, tags), "bt2020nc,smpte2084,bt2020")
        let frameSideData = try Tool.run("ffprobe", ["-v", "error", "-show_frames", "-read_intervals", "%+#1", mp4]).stdout
        XCTAssertTrue(frameSideData.contains("side_data_type=Mastering display metadata"), "SEI in the HEVC stream")
        XCTAssertTrue(frameSideData.contains("max_content=1000"))

        // With effects the render says the HDR input is worked on as SDR (makeup colours and
        // LUTs are SDR colours); with none it says nothing.
        XCTAssertEqual(try render([input, "-o", mkv, "-y", "--no-effects"]).messages, "")
        XCTAssertEqual(try render([input, "-o", mkv, "-y"]).messages,
                       "velvet: warning: \(input) is HDR (PQ); the effects work on its code values as on SDR video, so makeup "
                       + "colours and LUTs made for SDR look different (brighter) on it: tone-map it to SDR first for an SDR look\n")
    }

    func testSixteenBitPNGRoundTripsAtSixteenBits() throws {
        let scratch = try Scratch()
        let input = scratch.path("deep.png")
        // A smooth 16-bit ramp: an 8-bit path would leave at most 256 levels.
        try Tool.ffmpeg(["-f", "lavfi", "-i", "nullsrc=size=512x16,format=rgb48le,geq=r='X*128':g='32768':b='65535-X*128'",
                         "-frames:v", "1", "-pix_fmt", "rgb48be", input])
        let original = try samples(input)
        XCTAssertGreaterThan(Set(original).count, 500, "the test image holds 16-bit levels")
        for (name, effects) in [("plain.png", ["--no-effects"]), ("effects.png", [])] { // no face: the effects change nothing
            let output = scratch.path(name)
            _ = try render([input, "-o", output] + effects)
            XCTAssertEqual(try Tool.probe(output, "stream=pix_fmt"), "rgb48be", name)
            let worst = zip(try samples(output), original).map { abs(Int($0) - Int($1)) }.max() ?? .max
            XCTAssertLessThanOrEqual(worst, 65535 / 4096, "\(name): within 1/4096")
        }
    }

    /// 16-bit samples of the first frame.
    private func samples(_ path: String) throws -> [UInt16] {
        let data = try Tool.pixels(path, "rgb48le")
        return data.withUnsafeBytes { raw in (0..<(raw.count / 2)).map { raw.loadUnaligned(fromByteOffset: $0 * 2, as: UInt16.self) } }
    }

    /// Formats the kernels do not read (12-bit 4:4:4, ProRes 4444 with alpha, planar RGB)
    /// are repacked, not converted: their depth and tags reach the output.
    func testFormatsTheGPUDoesNotReadKeepDepthAndColour() throws {
        let scratch = try Scratch()
        let cases: [(file: String, arguments: [String], tags: String, reference: String)] = [
            ("deep.mkv", ["-pix_fmt", "yuv444p12le", "-c:v", "ffv1", "-colorspace", "bt709", "-color_primaries", "bt709",
                          "-color_trc", "bt709"], "bt709,bt709,bt709", "null"),
            ("prores.mov", ["-c:v", "prores_ks", "-profile:v", "4444", "-pix_fmt", "yuva444p10le"], "", "null"),
            // RGB becomes BT.709 YUV, tagged so.
            ("planar-rgb.mkv", ["-pix_fmt", "gbrp10le", "-c:v", "ffv1", "-color_primaries", "bt709", "-color_trc", "bt709"],
             "bt709,bt709,bt709", "scale=out_color_matrix=bt709:flags=accurate_rnd"),
        ]
        for item in cases {
            let input = scratch.path(item.file), output = scratch.path("out-\(item.file).mkv"), reference = scratch.path("ref-\(item.file).mkv")
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-frames:v", "3"] + item.arguments + [input])
            _ = try render([input, "-o", output, "--no-effects", "--crf", "4"])
            XCTAssertEqual(try Tool.probe(output, "stream=pix_fmt"), "yuv420p10le", "\(item.file): deep input stays deep")
            if !item.tags.isEmpty {
                XCTAssertEqual(try Tool.probe(output, "stream=color_space,color_transfer,color_primaries"), item.tags, item.file)
            }
            // Against FFmpeg's own conversion (luma: the chroma filters differ).
            try Tool.ffmpeg(["-i", input, "-vf", item.reference, "-pix_fmt", "yuv420p10le",
                             "-c:v", "libx264", "-crf", "4", "-preset", "ultrafast", reference])
            XCTAssertGreaterThan(try lumaPSNR(output, reference), 45, item.file)
        }
    }

    /// A YUV input's alpha is not read, so the output does not take its alpha format (an
    /// FFV1 yuva420p input made a yuva420p output whose alpha was all opaque, and a PNG of it
    /// rgba): the format without alpha, and a warning; `--pix-fmt` can still name one. An RGBA
    /// picture keeps its alpha.
    func testAYUVInputsAlphaIsNotPromisedByTheOutput() throws {
        let scratch = try Scratch()
        let input = scratch.path("alpha.mkv"), picture = scratch.path("alpha.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-frames:v", "2",
                         "-vf", "format=yuva420p,geq=lum='lum(X,Y)':cb='cb(X,Y)':cr='cr(X,Y)':a='if(lt(X,40),0,255)'", "-c:v", "ffv1", input])
        try Tool.ffmpeg(["-i", input, "-frames:v", "1", "-pix_fmt", "rgba", picture])
        let warning = "velvet: warning: \(input) has alpha (yuva420p), which Velvet does not keep for YUV video: the output is opaque\n"
        for (output, format, options) in [("out.mkv", "yuv420p", ["--codec", "ffv1"]), ("named.mkv", "yuva420p", ["--codec", "ffv1", "--pix-fmt", "yuva420p"]),
                                          ("frame.png", "rgb24", ["--frame", "1"])] {
            let result = try Tool.run(Tool.velvet, ["render", input, "-o", scratch.path(output), "--no-effects", "--quiet"] + options)
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(result.messages, warning, output)
            XCTAssertEqual(try Tool.probe(scratch.path(output), "stream=pix_fmt"), format, output)
        }
        _ = try render([picture, "-o", scratch.path("kept.png")])
        XCTAssertEqual(try Tool.probe(scratch.path("kept.png"), "stream=pix_fmt"), "rgba", "an RGBA picture's alpha is kept")
    }

    /// A YCCK JPEG (Adobe's CMYK: four components, transform 2), which FFmpeg reads as yuva444p,
    /// has no alpha to lose: no warning (it said "has alpha (yuva444p)"), and the colours are
    /// ffmpeg's own.
    func testAYCCKJPEGIsNotTakenForAlpha() throws {
        let scratch = try Scratch()
        let input = scratch.path("ycck.jpg"), output = scratch.path("out.png")
        try Self.ycckJPEG.write(to: URL(fileURLWithPath: input))
        XCTAssertEqual(try Tool.probe(input, "stream=pix_fmt"), "yuva444p", "the input is what FFmpeg reads as YUV with alpha")
        let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--no-effects", "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.messages, "")
        let ours = try Tool.run("ffmpeg", ["-v", "error", "-i", output, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        let theirs = try Tool.run("ffmpeg", ["-v", "error", "-i", input, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        XCTAssertEqual(ours.output, theirs.output)
    }

    /// An 8x8 baseline JPEG of four components (ids 1-4, Adobe transform 2), every block flat:
    /// one-code Huffman tables (DC category 0, AC end of block), so the scan is one zero byte.
    private static let ycckJPEG: Data = {
        func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
            [0xFF, marker, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        }
        let oneCode: [UInt8] = [1] + [UInt8](repeating: 0, count: 15) + [0]
        var bytes: [UInt8] = [0xFF, 0xD8]
        bytes += segment(0xEE, Array("Adobe".utf8) + [0, 100, 0, 0, 0, 0, 2])
        bytes += segment(0xDB, [0] + [UInt8](repeating: 1, count: 64))
        bytes += segment(0xC0, [8, 0, 8, 0, 8, 4] + (1...4).flatMap { [UInt8($0), 0x11, 0] })
        bytes += segment(0xC4, [0x00] + oneCode + [0x10] + oneCode)
        bytes += segment(0xDA, [4] + (1...4).flatMap { [UInt8($0), 0x00] } + [0, 63, 0])
        bytes += [0x00, 0xFF, 0xD9]
        return Data(bytes)
    }()

    private func lumaPSNR(_ a: String, _ b: String) throws -> Double {
        let result = try Tool.run("ffmpeg", ["-hide_banner", "-i", a, "-i", b, "-lavfi", "[0:v][1:v]psnr", "-f", "null", "-"])
        guard let range = result.stderr.range(of: "PSNR y:") else { return -1 }
        return Double(result.stderr[range.upperBound...].prefix { !$0.isWhitespace }) ?? -1
    }

    // MARK: Structure: field order, subtitles, chapters, audio, timestamps

    /// Video that starts before zero (a TS whose clock wrapped just before it) starts at zero
    /// in an MP4, where an edit list would hide what comes before; an MP4 timescale of 10^9
    /// is not copied (MP4's composition offsets overflow at it). Every frame decodes, as from ffmpeg.
    func testNegativeStartsAndHugeTimescalesKeepEveryFrame() throws {
        let scratch = try Scratch()
        let wrapped = scratch.path("wrapped.ts"), plain = scratch.path("plain.mp4"), fine = scratch.path("fine.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-f", "lavfi", "-i", "sine=r=48000", "-t", "2",
                         "-c:v", "libx264", "-bf", "0", "-c:a", "aac", "-output_ts_offset", "95441.5", wrapped])
        XCTAssertTrue(try Tool.probe(wrapped, "stream=start_time").hasPrefix("-0.8"), "the wrap puts the start before zero")
        // No B-frames in the input: FFmpeg's muxer cannot store them at 10^9 either.
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-frames:v", "5", "-c:v", "libx264", "-bf", "0", plain])
        try Tool.ffmpeg(["-i", plain, "-c", "copy", "-video_track_timescale", "1000000000", fine])
        func decoded(_ path: String, _ stream: String) throws -> String {
            try Tool.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", stream, "-show_entries", "stream=nb_read_frames",
                                     "-of", "csv=p=0", path]).stdout.split(separator: "\n").last.map(String.init) ?? "" // TS: program lines first
        }
        for (input, frames) in [(wrapped, "20"), (fine, "5")] {
            let output = scratch.path("out-\(frames).mp4")
            _ = try render([input, "-o", output, "--no-effects"])
            XCTAssertEqual(try decoded(output, "v:0"), frames, input)
        }
        XCTAssertEqual(try Tool.probe(scratch.path("out-20.mp4"), "stream=start_time"), "0.000000")
        // The audio, 21 ms earlier than the video, keeps that much hidden: its priming frame, nothing more.
        let audioIn = Int(try decoded(wrapped, "a:0")) ?? 0, audioOut = Int(try decoded(scratch.path("out-20.mp4"), "a:0")) ?? 0
        XCTAssertGreaterThan(audioIn, 90)
        XCTAssertGreaterThanOrEqual(audioOut, audioIn - 1)
    }

    /// A file whose clock starts late (a camcorder's or broadcast TS, 1000 s in) starts at zero,
    /// as ffmpeg's output does, the streams keeping their offsets (it became a 1003 s MP4 and
    /// MKV whose first 1001 s were empty, which velvet then read as damaged).
    func testALateStartingClockStartsAtZero() throws {
        let scratch = try Scratch()
        let camera = scratch.path("camera.ts")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-f", "lavfi", "-i", "sine=r=48000", "-t", "2",
                         "-c:v", "libx264", "-c:a", "aac", "-output_ts_offset", "1000", camera])
        for name in ["out.mp4", "out.mkv"] {
            let output = scratch.path(name)
            _ = try render([camera, "-o", output, "--no-effects"])
            let duration = Double(try Tool.probe(output, "format=duration")) ?? 0
            XCTAssertEqual(duration, 2.03, accuracy: 0.05, name)
            for stream in ["v:0", "a:0"] {
                XCTAssertLessThan(Double(try Tool.probe(output, "stream=start_time", stream: stream)) ?? 9, 0.05, "\(name) \(stream)")
            }
            _ = try render([output, "-o", scratch.path("again-" + name), "--no-effects"]) // and reads back as whole
        }
    }

    /// A re-encoded stream keeps its disposition and tags, as ffmpeg keeps them (the default
    /// audio track moved to the first one), and its encoder
    /// tag names the encoder that made it (MPEG-4 or FFV1 video said libx264).
    func testReencodedStreamsKeepTheirDispositionAndNameTheirEncoder() throws {
        let scratch = try Scratch()
        let input = scratch.path("two.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-f", "lavfi", "-i", "sine=f=300:r=48000:d=1",
                         "-f", "lavfi", "-i", "sine=f=600:r=48000:d=1", "-map", "0:v", "-map", "1:a", "-map", "2:a", "-t", "1",
                         "-c:v", "libx264", "-c:a", "libopus", "-disposition:a:0", "0", "-disposition:a:1", "default",
                         "-metadata:s:a:0", "language=eng", "-metadata:s:a:1", "language=fra", input])
        let output = scratch.path("out.mov") // Opus is re-encoded to AAC for MOV
        let written = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--codec", "mpeg4", "--no-effects"])
        XCTAssertEqual(written.status, 0, written.stderr)
        for (stream, expected) in [("a:0", "aac,0,eng"), ("a:1", "aac,1,fra")] {
            XCTAssertEqual(try Tool.probe(output, "stream=codec_name:stream_disposition=default:stream_tags=language",
                                          stream: stream), expected, stream)
        }
        XCTAssertTrue(try Tool.probe(output, "stream_tags=encoder").hasSuffix(" mpeg4"), "the video encoder tag")
    }

    /// Formats that differ only in how their planes are packed (yuv420p and nv12) pass
    /// losslessly: the GPU writes the input's packing and swscale repacks it (through RGB the
    /// chroma was resampled: 35 dB at --crf 0, away from any face too).
    func testRepackingNV12AndPlanarIsLossless() throws {
        let scratch = try Scratch()
        let planar = scratch.path("planar.mkv"), packed = scratch.path("packed.nut")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-frames:v", "3", "-pix_fmt", "yuv420p", "-c:v", "ffv1", planar])
        try Tool.ffmpeg(["-i", planar, "-pix_fmt", "nv12", "-c:v", "rawvideo", packed])
        let original = try Tool.pixels(planar, "yuv420p")
        for (input, extra) in [(planar, ["--pix-fmt", "nv12", "--crf", "0"]), (packed, ["--codec", "ffv1"]), (packed, ["--crf", "0"])] {
            let output = scratch.path("out-\(URL(fileURLWithPath: input).lastPathComponent)-\(extra.joined()).mkv")
            let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--no-effects"] + extra)
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(try Tool.pixels(output, "yuv420p"), original, "\(input) \(extra)")
        }
    }

    /// AVI holds a frame per tick of its stream's rate: its video is written at the frame
    /// rate, as ffmpeg's is (the input's 1/12800 made a "12800 fps" file of empty ticks, which
    /// velvet then read as damaged).
    func testAVIIsWrittenAtTheFrameRate() throws {
        let scratch = try Scratch()
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-frames:v", "10", "-c:v", "libx264", scratch.path("in.mp4")])
        for codec in ["libx264", "ffv1"] {
            let output = scratch.path("\(codec).avi")
            let written = try Tool.run(Tool.velvet, ["render", scratch.path("in.mp4"), "-o", output, "--codec", codec, "--no-effects"])
            XCTAssertEqual(written.status, 0, written.stderr)
            XCTAssertEqual(try Tool.probe(output, "stream=avg_frame_rate,nb_frames"), "10/1,10", codec)
            _ = try render([output, "-o", scratch.path("\(codec)-back.mp4"), "--no-effects"])
            XCTAssertEqual(try Tool.probe(scratch.path("\(codec)-back.mp4"), "stream=nb_frames"), "10", codec)
        }
    }

    /// The pixel aspect ratio the container states (MP4's pasp) is kept, and turned with the
    /// pixels; y4m's header states the frame rate (not the input's time base) and that ratio,
    /// and numbers a variable-rate input's frames in order, as ffmpeg's y4m does.
    func testPixelAspectRatioAndY4MHeader() throws {
        let scratch = try Scratch()
        let plain = scratch.path("plain.mp4"), wide = scratch.path("wide.mp4"), turned = scratch.path("turned.mp4")
        // No B-frames in the input: FFmpeg's muxer cannot store them at 10^9 either.
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-frames:v", "5", "-c:v", "libx264", "-bf", "0", plain])
        try Tool.ffmpeg(["-i", plain, "-c", "copy", "-aspect", "16:9", wide])
        try Tool.ffmpeg(["-i", wide, "-c", "copy", "-metadata:s:v:0", "rotate=90", turned])
        XCTAssertEqual(try Tool.probe(wide, "stream=sample_aspect_ratio"), "4:3")
        for (output, aspect) in [("wide.mkv", "4:3"), ("out.mp4", "4:3")] {
            _ = try render([wide, "-o", scratch.path(output), "--no-effects"])
            XCTAssertEqual(try Tool.probe(scratch.path(output), "stream=sample_aspect_ratio"), aspect, output)
        }
        _ = try render([turned, "-o", scratch.path("upright.mkv"), "--no-effects"])
        XCTAssertEqual(try Tool.probe(scratch.path("upright.mkv"), "stream=width,height,sample_aspect_ratio"), "120,160,3:4",
                       "turned upright, the ratio turns too")
        _ = try render([wide, "-o", scratch.path("wide.y4m"), "--no-effects"])
        let header = String(decoding: try Data(contentsOf: URL(fileURLWithPath: scratch.path("wide.y4m"))).prefix(36), as: UTF8.self)
        XCTAssertTrue(header.hasPrefix("YUV4MPEG2 W160 H120 F10:1 Ip A4:3 "), header)

        let variable = scratch.path("variable.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-frames:v", "8",
                         "-vf", "setpts='N*0.1/TB+if(gt(N,3),0.23/TB,0)'", "-fps_mode", "passthrough", "-c:v", "libx264", variable])
        XCTAssertNotEqual(try Tool.probe(variable, "format=duration"), "0.800000", "a gap after frame 3: not 8 frames at 10 fps")
        _ = try render([variable, "-o", scratch.path("variable.y4m"), "--no-effects"])
        XCTAssertEqual(try Tool.probe(scratch.path("variable.y4m"), "stream=r_frame_rate"), "10/1")
        XCTAssertEqual(try Tool.frameMD5s(scratch.path("variable.y4m")).split(separator: "\n").count, 8, "every frame, in order")
    }

    func testInterlacedInputStaysInterlaced() throws {
        let scratch = try Scratch()
        let input = scratch.path("interlaced.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-frames:v", "6", "-flags", "+ildct+ilme", "-top", "1",
                         "-c:v", "libx264", "-x264-params", "tff=1", input])
        XCTAssertEqual(try Tool.probe(input, "stream=field_order"), "tt")
        for (name, codec) in [("out.mkv", "h264"), ("out.mp4", "h264"), ("hevc.mkv", "hevc")] {
            let output = scratch.path(name)
            _ = try render([input, "-o", output, "--no-effects", "--codec", codec])
            XCTAssertEqual(try Tool.probe(output, "stream=field_order"), "tt", name)
        }
        // Bottom-field-first frames in a stream FFmpeg reads as top first: the frames say which
        // (the stream's word was taken, and players deinterlaced with the wrong order).
        let bottom = scratch.path("bottom.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-frames:v", "6", "-vf", "setfield=bff",
                         "-flags", "+ildct+ilme", "-c:v", "libx264", bottom])
        XCTAssertEqual(try Tool.probe(bottom, "stream=field_order"), "tt", "the stream's word")
        _ = try render([bottom, "-o", scratch.path("bottom.mkv"), "--no-effects"])
        XCTAssertEqual(try Tool.probe(scratch.path("bottom.mkv"), "stream=field_order"), "bb")
        // Top-first fields, then progressive frames (two TS files joined): every frame coded top
        // first, as the stream says (the progressive ones made x264 code all of them bottom first).
        let parts = ["fields.ts", "frames.ts"].map(scratch.path)
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-frames:v", "6", "-vf", "setfield=tff", "-flags", "+ildct+ilme",
                         "-c:v", "libx264", "-x264-params", "tff=1", parts[0]])
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-frames:v", "6", "-c:v", "libx264", "-output_ts_offset", "0.24",
                         parts[1]])
        let joined = scratch.path("joined.ts")
        try parts.reduce(into: Data()) { $0 += try Data(contentsOf: URL(fileURLWithPath: $1)) }.write(to: URL(fileURLWithPath: joined))
        _ = try render([joined, "-o", scratch.path("joined.mkv"), "--no-effects"])
        let fields = try Tool.probe(scratch.path("joined.mkv"), "frame=interlaced_frame,top_field_first").split(separator: "\n")
        XCTAssertEqual(fields.count, 12)
        XCTAssertEqual(Set(fields), ["1,1"], "every frame's fields coded top first")
    }

    /// Matroska's attached files (an ASS track's fonts) go into a Matroska output with the
    /// track (they were dropped, and the subtitles lost their fonts); MP4 drops them, as ffmpeg does.
    func testAttachedFontsGoIntoMatroska() throws {
        let scratch = try Scratch()
        let font = scratch.path("font.ttf"), input = scratch.path("in.mkv")
        try Data((0..<512).map { UInt8($0 % 251) }).write(to: URL(fileURLWithPath: font))
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-t", "1", "-c:v", "libx264", "-attach", font,
                         "-metadata:s:t", "mimetype=application/x-truetype-font", input])
        _ = try render([input, "-o", scratch.path("out.mkv"), "--no-effects"])
        XCTAssertEqual(try Tool.probe(scratch.path("out.mkv"), "stream=codec_name:stream_tags=filename", stream: "t"), "ttf,font.ttf")
        _ = try render([input, "-o", scratch.path("out.mp4"), "--no-effects"])
        XCTAssertEqual(try Tool.probe(scratch.path("out.mp4"), "stream=codec_name", stream: "t"), "")
    }

    func testSubtitlesAndChaptersAreKept() throws {
        let scratch = try Scratch()
        let subtitles = scratch.path("s.srt"), chapters = scratch.path("chapters.txt"), input = scratch.path("in.mkv")
        try "1\n00:00:00,000 --> 00:00:00,500\nHello\n\n2\n00:00:00,500 --> 00:00:00,900\nWorld\n"
            .write(toFile: subtitles, atomically: true, encoding: .utf8)
        try ";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=500\ntitle=One\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=500\nEND=1000\ntitle=Two\n"
            .write(toFile: chapters, atomically: true, encoding: .utf8)
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-i", subtitles, "-i", chapters, "-map", "0:v", "-map", "1",
                         "-map_chapters", "2", "-t", "1", "-c:v", "libx264", "-c:s", "srt", input])
        for (name, codec) in [("out.mkv", "subrip"), ("out.mp4", "mov_text"), ("out.mov", "mov_text")] {
            let output = scratch.path(name)
            _ = try render([input, "-o", output, "--no-effects"])
            XCTAssertEqual(try Tool.probe(output, "stream=codec_name", stream: "s"), codec, name)
            XCTAssertEqual(try Tool.probe(output, "chapter=start_time,end_time", stream: "v"), "0.000000,0.500000\n0.500000,1.000000", name)
            let text = try Tool.run("ffmpeg", ["-v", "error", "-i", output, "-map", "0:s", "-f", "srt", "-"]).stdout
            XCTAssertTrue(text.contains("00:00:00,500 --> 00:00:00,900\nWorld"), "\(name): the events and their timing: \(text)")
        }
    }

    func testAudioTheMuxerTakesOnlyExperimentallyIsReencoded() throws {
        let scratch = try Scratch()
        for (codec, outputs) in [("flac", ["mp4", "mov"]), ("libopus", ["mov"])] {
            let input = scratch.path("\(codec).mkv")
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-f", "lavfi", "-i", "sine=sample_rate=48000",
                             "-t", "1", "-c:v", "libx264", "-c:a", codec, input])
            for container in outputs {
                let output = scratch.path("\(codec).\(container)")
                _ = try render([input, "-o", output, "--no-effects"])
                XCTAssertEqual(try Tool.probe(output, "stream=codec_name", stream: "a"), "aac", "\(codec) in .\(container)")
            }
        }
    }

    /// Audio AAC cannot go into is re-encoded to the container's own codec (WebM: Opus, Ogg:
    /// Vorbis, as ffmpeg picks them); a format that holds no audio at all (GIF, animated WebP,
    /// APNG) drops it, as ffmpeg does, instead of refusing the render.
    func testAudioFollowsWhatTheContainerHolds() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-f", "lavfi", "-i", "sine=sample_rate=44100", "-t", "1",
                         "-c:v", "libx264", "-c:a", "aac", input])
        for (name, audio) in [("out.webm", "opus"), ("out.ogv", "vorbis"), ("out.gif", ""), ("out.webp", ""), ("out.apng", "")] {
            let output = scratch.path(name)
            _ = try render([input, "-o", output, "--no-effects"])
            XCTAssertEqual(try Tool.probe(output, "stream=codec_name", stream: "a"), audio, name)
            if name != "out.webp" { // FFmpeg 5.1 cannot decode an animated WebP
                XCTAssertEqual(try Tool.frameMD5s(output).split(separator: "\n").count, 10, name)
            }
            if !audio.isEmpty {
                let seconds = try Tool.run("ffmpeg", ["-v", "error", "-i", output, "-vn", "-f", "s16le", "-ac", "1", "-ar", "1000", "-"]).output.count / 2
                XCTAssertEqual(Double(seconds) / 1000, 1, accuracy: 0.05, "\(name): a second of audio")
            }
        }
    }

    /// Audio re-encoded for WebM or Ogg takes what their encoders take: 5.1 with side channels
    /// goes to Opus as 5.1 (its channels moved to the back, as ffmpeg's resampler moves them),
    /// 96 kHz goes to Vorbis in its quality mode (both failed: "cannot encode: audio: Invalid
    /// argument").
    func testAudioReencodingMeetsTheEncoder() throws {
        let scratch = try Scratch()
        let side = scratch.path("side.mkv"), high = scratch.path("high.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-f", "lavfi", "-i", "sine=r=48000", "-t", "1",
                         "-filter_complex", "[1:a]pan=5.1(side)|c0=c0|c1=c0|c2=c0|c3=c0|c4=c0|c5=c0[a]", "-map", "0:v", "-map", "[a]",
                         "-c:v", "libx264", "-c:a", "ac3", side])
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-f", "lavfi", "-i", "sine=r=96000", "-t", "1",
                         "-c:v", "libx264", "-c:a", "aac", high])
        for (input, output, expected) in [(side, "side.webm", "opus,6"), (high, "high.ogv", "vorbis,1")] {
            let written = try Tool.run(Tool.velvet, ["render", input, "-o", scratch.path(output), "--no-effects"])
            XCTAssertEqual(written.status, 0, written.stderr)
            XCTAssertEqual(try Tool.probe(scratch.path(output), "stream=codec_name,channels", stream: "a:0"), expected, output)
        }
    }

    /// FLV marks 8 and 16 kHz audio as its special rate, which only Nellymoser reads so: PCM
    /// there is re-encoded (it was copied, and played at 5512 Hz).
    func testFLVReencodesAudioAtRatesItCannotState() throws {
        let scratch = try Scratch()
        for rate in [8000, 16000] {
            let input = scratch.path("pcm\(rate).mov"), output = scratch.path("out\(rate).flv")
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-f", "lavfi", "-i", "sine=r=\(rate)", "-t", "1",
                             "-c:v", "libx264", "-c:a", "pcm_s16le", input])
            _ = try render([input, "-o", output, "--no-effects"])
            XCTAssertEqual(try Tool.probe(output, "stream=codec_name,sample_rate", stream: "a:0"), "aac,\(rate)")
        }
    }

    /// MPEG-4 part 2 takes a time base of 16 bits: from a TS (1/90000) it gets 1/rate, every frame kept.
    func testMPEG4FromATransportStream() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.ts"), output = scratch.path("out.avi")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10", "-frames:v", "5", "-c:v", "libx264", input])
        let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--no-effects", "--codec", "mpeg4", "--quiet"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try Tool.frameMD5s(output).split(separator: "\n").count, 5)
        XCTAssertEqual(try Tool.probe(output, "stream=codec_name,r_frame_rate"), "mpeg4,10/1")
    }

    func testStreamsWithoutTimestampsGetThemFromTheFrameRate() throws {
        let scratch = try Scratch()
        let cases: [(file: String, arguments: [String], frames: Int)] = [
            ("raw.h264", ["-c:v", "libx264"], 10),
            ("raw.hevc", ["-c:v", "libx265", "-x265-params", "log-level=error"], 10),
            ("program.mpg", ["-c:v", "libx264", "-f", "mpeg"], 30), // H.264 in MPEG-PS: some frames have no pts
        ]
        for item in cases {
            let input = scratch.path(item.file), output = scratch.path("out-\(item.file).mp4")
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-frames:v", "\(item.frames)"] + item.arguments + [input])
            _ = try render([input, "-o", output, "--no-effects"])
            let times = try Tool.probe(output, "frame=pts_time").split(separator: "\n").compactMap { Double($0) }
            XCTAssertEqual(times.count, item.frames, item.file)
            XCTAssertEqual(zip(times.dropFirst(), times).map { $0 - $1 }.map { ($0 * 1000).rounded() }, Array(repeating: 40, count: item.frames - 1),
                           "\(item.file): one frame at 25 fps apart")
        }
    }

    func testOddSizeRendersWithAFullChromaFormat() throws {
        let scratch = try Scratch()
        let input = scratch.path("odd.png"), output = scratch.path("odd.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=162x122", "-vf", "format=rgb24,crop=161:121", "-frames:v", "1", input])
        _ = try render([input, "-o", output, "--no-effects", "--pix-fmt", "yuv444p"])
        XCTAssertEqual(try Tool.probe(output, "stream=width,height,pix_fmt"), "161,121,yuv444p", "no row or column lost")
    }
}
