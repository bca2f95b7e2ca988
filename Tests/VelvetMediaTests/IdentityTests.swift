import Foundation
import VelvetTestSupport
import XCTest

/// With every effect off, Velvet's output must equal a plain FFmpeg transcode and stills must
/// be bit-identical. An unchanged frame normally skips the GPU (its decoded planes are
/// encoded), so the colour path itself, where a colour-space halo would come from, is forced
/// by `testForcedGPURoundTripIsLossless` here and checked per pixel format by `GPURoundTripTests`.
final class IdentityTests: XCTestCase {
    func testPNGRoundTripIsBitIdentical() throws {
        let scratch = try Scratch()
        for (name, format) in [("rgb.png", "rgb24"), ("alpha.png", "rgba")] {
            let input = scratch.path(name), output = scratch.path("out-" + name)
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=203x151", "-frames:v", "1", "-pix_fmt", format, input])
            let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--no-effects"], environment: ["VELVET_VALIDATION": "1"])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(try Tool.probe(output, "stream=pix_fmt"), format)
            XCTAssertEqual(try Tool.pixels(input, "rgba"), try Tool.pixels(output, "rgba"), name)
        }
    }

    /// With `VELVET_FORCE_GPU_ROUNDTRIP=1` an unchanged frame takes the GPU colour path
    /// (`color_out` and `download` are timed), and a lossless output (`--crf 0`, PNG) holds
    /// every decoded frame bit for bit: 8, 10 and 12-bit YUV (x264 qp 0, x265 lossless=1),
    /// 8 and 16-bit RGB and grey. `GPURoundTripTests` covers every format the GPU reads.
    func testForcedGPURoundTripIsLossless() throws {
        let scratch = try Scratch()
        let cases: [(format: String, input: String, output: String, codec: [String])] = [
            ("yuv420p", "a.nut", "a.mkv", []), ("yuv422p10le", "b.nut", "b.mkv", []),
            ("yuv444p12le", "c.nut", "c.mkv", ["--codec", "hevc"]), ("rgb24", "d.png", "d.png", []),
            ("rgba64be", "e.png", "e.png", []), ("gray16be", "f.png", "f.png", []),
        ]
        for item in cases {
            let input = scratch.path(item.input), output = scratch.path("out-" + item.output)
            let still = item.input.hasSuffix(".png")
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=\(still ? "65x49" : "64x48"):rate=10", "-frames:v", still ? "1" : "3",
                             "-vf", "noise=alls=40:allf=t", "-pix_fmt", item.format] + (still ? [] : ["-c:v", "rawvideo"]) + [input])
            let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--crf", "0", "--preset-x264", "ultrafast",
                                                    "--no-effects", "--json"] + item.codec,
                                      environment: ["VELVET_VALIDATION": "1", "VELVET_FORCE_GPU_ROUNDTRIP": "1"])
            XCTAssertEqual(result.status, 0, "\(item.format): \(result.stderr)")
            let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: result.output) as? [String: Any])
            let sections = Set((summary["gpu_ms"] as? [String: Any] ?? [:]).keys)
            XCTAssertTrue(sections.isSuperset(of: ["color_out", "download"]), "\(item.format): the GPU path must run, got \(sections)")
            XCTAssertEqual(try Tool.probe(output, "stream=pix_fmt"), item.format)
            XCTAssertEqual(try Tool.frameMD5s(output), try Tool.frameMD5s(input), "\(item.format): every frame bit-exact")
        }
        // Without the variable the unchanged frame goes to the encoder as decoded.
        let plain = try Tool.run(Tool.velvet, ["render", scratch.path("d.png"), "-o", scratch.path("plain.png"), "--no-effects", "--json"])
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: plain.output) as? [String: Any])
        XCTAssertNil((summary["gpu_ms"] as? [String: Any])?["color_out"], "no colour out without the variable")
    }

    func testVideoMatchesPlainTranscodeWithAudioCopied() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.mp4"), output = scratch.path("out.mp4"), reference = scratch.path("ref.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                         "-t", "2", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", input])
        let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--crf", "20", "--preset-x264", "fast", "--no-effects"],
                                  environment: ["VELVET_VALIDATION": "1"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.isEmpty, "nothing on stdout unless asked: \(result.stdout)")
        try Tool.ffmpeg(["-i", input, "-c:v", "libx264", "-crf", "20", "-preset", "fast", "-c:a", "copy", reference])
        XCTAssertGreaterThanOrEqual(try Tool.psnr(output, reference), 50)
        XCTAssertEqual(try Tool.probe(output, "stream=nb_frames"), try Tool.probe(input, "stream=nb_frames"))
        XCTAssertEqual(try Tool.streamMD5(output, "a"), try Tool.streamMD5(input, "a"), "audio must be copied bit-identical")
    }

    func testAudioTheContainerCannotHoldIsReencoded() throws {
        let scratch = try Scratch()
        let input = scratch.path("pcm.mkv"), output = scratch.path("out.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100",
                         "-t", "1", "-c:v", "libx264", "-c:a", "pcm_s16le", "-shortest", input])
        let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--preset-x264", "ultrafast", "--no-effects"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try Tool.probe(output, "stream=codec_name,sample_rate", stream: "a:0"), "aac,44100")
        let duration = Double(try Tool.probe(output, "stream=duration", stream: "a:0")) ?? 0
        XCTAssertEqual(duration, 1.0, accuracy: 0.05, "the whole track is kept")
    }

    func testHEVCOutputMatchesPlainTranscode() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.mkv"), output = scratch.path("out.mkv"), reference = scratch.path("ref.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=256x144:rate=10", "-t", "1", "-c:v", "libx264", input])
        let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--codec", "hevc", "--crf", "24", "--preset-x264", "ultrafast", "--no-effects"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try Tool.probe(output, "stream=codec_name"), "hevc")
        try Tool.ffmpeg(["-i", input, "-c:v", "libx265", "-crf", "24", "-preset", "ultrafast", "-x265-params", "log-level=error", reference])
        XCTAssertGreaterThanOrEqual(try Tool.psnr(output, reference), 50)
    }

    /// Every decoded layout the kernels read directly comes back as a plain transcode would.
    func testPixelFormatsRoundTrip() throws {
        let scratch = try Scratch()
        let cases: [(format: String, file: String, codec: [String])] = [
            ("yuv420p", "a.mp4", ["-c:v", "libx264"]), ("yuvj420p", "b.avi", ["-c:v", "mjpeg"]),
            ("yuv422p", "c.mkv", ["-c:v", "libx264"]), ("yuv444p", "d.mkv", ["-c:v", "libx264"]),
            ("yuv420p10le", "e.mkv", ["-c:v", "libx264"]), ("nv12", "f.nut", ["-c:v", "rawvideo"]),
            ("gray", "g.mkv", ["-c:v", "ffv1"]), ("yuv420p", "h.webm", ["-c:v", "libvpx-vp9"]),
            ("yuv420p", "i.avi", ["-c:v", "mpeg4"]), ("yuv420p", "j.mkv", ["-c:v", "libaom-av1", "-cpu-used", "8"]),
            ("yuv420p10le", "k.mp4", ["-c:v", "libx265", "-x265-params", "log-level=error"]),
        ]
        for item in cases {
            let input = scratch.path(item.file), output = scratch.path("out-\(item.file).mkv"), reference = scratch.path("ref-\(item.file).mkv")
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=176x144:rate=10", "-t", "0.5", "-pix_fmt", item.format] + item.codec + [input])
            XCTAssertEqual(try Tool.probe(input, "stream=pix_fmt"), item.format, "the test input itself")
            let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--preset-x264", "ultrafast", "--no-effects"], environment: ["VELVET_VALIDATION": "1"])
            XCTAssertEqual(result.status, 0, "\(item.format): \(result.stderr)")
            // x264 takes nv12 and gray as they are; FFmpeg's plain transcode picks the same formats.
            let encoded = try Tool.probe(output, "stream=pix_fmt")
            try Tool.ffmpeg(["-i", input, "-c:v", "libx264", "-crf", "18", "-preset", "ultrafast", "-pix_fmt", encoded, reference])
            let psnr = try Tool.psnr(output, reference)
            XCTAssertGreaterThanOrEqual(psnr, 50, "\(item.format) -> \(encoded)")
        }
    }
}
