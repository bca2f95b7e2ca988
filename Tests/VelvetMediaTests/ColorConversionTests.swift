import Foundation
import VelvetGPU
import VelvetMedia
import VelvetTestSupport
import XCTest

/// The working image Velvet decodes to, against FFmpeg's own YUV -> RGB conversion.
final class ColorConversionTests: GPUTestCase {
    /// Grabs the first working image the renderer produces.
    private final class Capture: FrameEffect, @unchecked Sendable {
        var readback: GPUReadback?
        var size = (width: 0, height: 0)
        func record(_ frame: EffectFrame, on recorder: CommandRecorder) throws -> FrameChange {
            if readback == nil {
                readback = try recorder.download(frame.input)
                size = (frame.input.width, frame.input.height)
            }
            return .none
        }
    }

    private func working(_ input: String, scratch: Scratch) throws -> (values: [Float], width: Int, height: Int) {
        let capture = Capture()
        _ = try VideoRenderer(context: context).render(input: input, output: scratch.path("sink.mkv"), effect: capture)
        let bytes = try XCTUnwrap(capture.readback).bytes
        let values = stride(from: 0, to: bytes.count, by: 2).map { Float(Float16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)) }
        return (values, capture.size.width, capture.size.height)
    }

    /// FFmpeg's conversion of the first frame to 16-bit RGB, as 0...1 values.
    private func reference(_ input: String, matrix: String, range: String) throws -> [Float] {
        let result = try Tool.run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", input, "-frames:v", "1", "-vf",
            "scale=in_color_matrix=\(matrix):in_range=\(range):flags=accurate_rnd+full_chroma_int+bitexact",
            "-pix_fmt", "rgb48le", "-f", "rawvideo", "-"])
        return result.output.withUnsafeBytes { raw in
            (0..<(raw.count / 2)).map { Float(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 2, as: UInt16.self))) / 65535 }
        }
    }

    /// The exact conversion in double precision from the decoded 4:4:4 planes.
    private func exact(_ input: String, format: String, matrix: String, range: String) throws -> [Float] {
        let deep = format.hasSuffix("10le")
        let raw = try Tool.run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", input, "-frames:v", "1",
                                          "-f", "rawvideo", "-pix_fmt", format, "-"]).output
        let samples: [Double] = raw.withUnsafeBytes { bytes in
            deep ? (0..<(bytes.count / 2)).map { Double(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 2, as: UInt16.self))) }
                 : bytes.map(Double.init)
        }
        let plane = samples.count / 3
        let step = deep ? 4.0 : 1.0, maximum = deep ? 1023.0 : 255.0
        let (kr, kb) = matrix == "bt709" ? (0.2126, 0.0722) : (0.299, 0.114)
        let kg = 1 - kr - kb
        var rgb: [Float] = []
        for index in 0..<plane {
            let (y, u, v) = (samples[index], samples[plane + index], samples[2 * plane + index])
            let luma = range == "tv" ? (y - 16 * step) / (219 * step) : y / maximum
            let pb = range == "tv" ? (u - 128 * step) / (224 * step) : (u - 128 * step) / maximum
            let pr = range == "tv" ? (v - 128 * step) / (224 * step) : (v - 128 * step) / maximum
            let r = luma + 2 * (1 - kr) * pr, b = luma + 2 * (1 - kb) * pb
            rgb += [r, (luma - kr * r - kb * b) / kg, b].map { Float(min(max($0, 0), 1)) }
        }
        return rgb
    }

    private func maxAndMean(_ ours: (values: [Float], width: Int, height: Int), _ theirs: [Float]) -> (Float, Float) {
        var worst: Float = 0, total: Float = 0
        for pixel in 0..<(ours.width * ours.height) {
            for channel in 0..<3 {
                let difference = abs(min(max(ours.values[pixel * 4 + channel], 0), 1) - theirs[pixel * 3 + channel])
                worst = max(worst, difference)
                total += difference
            }
        }
        return (worst, total / Float(theirs.count))
    }

    /// Ours must match the exact formula to the precision of rgba16f; FFmpeg's own (integer)
    /// conversion must agree within about one 8-bit level.
    private func compare(format: String, matrix: String, range: String) throws {
        let scratch = try Scratch()
        let input = scratch.path("in.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64", "-frames:v", "1", "-vf",
                         "scale=out_color_matrix=\(matrix):out_range=\(range)", "-pix_fmt", format,
                         "-colorspace", matrix == "bt709" ? "bt709" : "smpte170m", "-color_range", range,
                         "-c:v", "ffv1", input])
        let ours = try working(input, scratch: scratch)
        let label = "\(format) \(matrix) \(range)"
        let exact = try exact(input, format: format, matrix: matrix, range: range)
        XCTAssertEqual(exact.count, ours.width * ours.height * 3)
        let (worst, mean) = maxAndMean(ours, exact)
        XCTAssertLessThanOrEqual(worst, 1e-3, "\(label): max error vs exact \(worst)")
        XCTAssertLessThanOrEqual(mean, 2.5e-4, "\(label): mean error vs exact \(mean)")
        let (ffmpegWorst, _) = maxAndMean(ours, try reference(input, matrix: matrix, range: range))
        XCTAssertLessThanOrEqual(ffmpegWorst, 1.5 / 255, "\(label): max difference from FFmpeg's conversion")
    }

    func testEightBitMatricesAndRanges() throws {
        try compare(format: "yuv444p", matrix: "bt709", range: "tv")
        try compare(format: "yuv444p", matrix: "bt601", range: "tv")
        try compare(format: "yuv444p", matrix: "bt709", range: "pc")
    }

    func testTenBitKeepsItsPrecision() throws {
        try compare(format: "yuv444p10le", matrix: "bt709", range: "tv")
        // A smooth 10-bit ramp must not collapse to 8-bit levels (banding).
        let scratch = try Scratch()
        let input = scratch.path("ramp.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=size=1024x8,format=yuv444p10le,geq=lum='64+X*876/1023':cb=512:cr=512", "-frames:v", "1",
                         "-pix_fmt", "yuv444p10le", "-c:v", "ffv1", input])
        let ours = try working(input, scratch: scratch)
        let levels = Set((0..<ours.width).map { ours.values[$0 * 4] })
        XCTAssertGreaterThan(levels.count, 600, "a 10-bit ramp should keep far more than 256 levels")
    }

    /// The range tag goes out as it came in, stated or not (as ffmpeg keeps it): Matroska
    /// wrote `tv` for an input that said nothing.
    func testRangeTagIsKeptAsStated() throws {
        let scratch = try Scratch()
        for (range, expected) in [(nil, "unknown"), ("tv", "tv"), ("pc", "pc")] as [(String?, String)] {
            let input = scratch.path("in-\(expected).mkv"), output = scratch.path("out-\(expected).mkv")
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64", "-frames:v", "2", "-pix_fmt", "yuv420p"]
                            + (range.map { ["-color_range", $0] } ?? []) + ["-c:v", "ffv1", input])
            XCTAssertEqual(try Tool.probe(input, "stream=color_range"), expected, "the input as made")
            let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--no-effects", "--codec", "ffv1", "--quiet"])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(try Tool.probe(output, "stream=color_range"), expected, "range \(range ?? "unstated")")
        }
    }

    /// An RGB picture written as a "J" format (`--pix-fmt yuvj444p`, full range by name) holds
    /// full-range samples, as ffmpeg writes them (they were limited, 16...235, under a full-range
    /// tag: the picture came out washed out), with effects or without.
    func testRGBToAFullRangeFormatIsFullRange() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "nullsrc=size=256x16,format=gray,geq=lum=X", "-frames:v", "1", "-pix_fmt", "rgb24", input])
        for (name, extra) in [("plain.mkv", ["--no-effects"]), ("effects.mkv", [])] {
            let output = scratch.path(name)
            let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--pix-fmt", "yuvj444p", "--crf", "0", "--quiet"] + extra)
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(try Tool.probe(output, "stream=pix_fmt,color_range"), "yuvj444p,pc", name)
            let luma = try Tool.pixels(output, "gray")
            XCTAssertEqual(luma.min(), 0, "\(name): black at 0, not 16")
            XCTAssertEqual(luma.max(), 255, "\(name): white at 255, not 235")
        }
    }

    /// A grey picture that states no range is full range, as swscale and ffmpeg take it: grey
    /// and grey + alpha PNG and TIFF come back exact through the GPU's colour path (grey +
    /// alpha was read and written as limited range: 0 and 255 clipped to 16 and 235, or the
    /// whole picture squeezed into 16...235 with effects).
    func testGreyPicturesAreFullRange() throws {
        let scratch = try Scratch()
        for (format, name) in [("ya8", "ya8.png"), ("ya8", "ya8.tiff"), ("gray", "gray.tiff"), ("gray", "gray.png"), ("ya16be", "ya16.png"),
                               ("gray16be", "gray16.png")] {
            let input = scratch.path(name), output = scratch.path("out-" + name + ".png")
            // Every grey level, black to white, across the picture.
            try Tool.ffmpeg(["-f", "lavfi", "-i", "nullsrc=size=256x16,format=gray,geq=lum=X", "-frames:v", "1", "-vf", "format=\(format)", input])
            let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--no-effects", "--quiet"],
                                      environment: [RenderOptions.forcesGPURoundTripVariable: "1"])
            XCTAssertEqual(result.status, 0, result.stderr)
            let before = try Tool.pixels(input, "gray"), after = try Tool.pixels(output, "gray")
            XCTAssertEqual(before.min(), 0, "\(name): the pattern holds black")
            XCTAssertEqual(before.max(), 255, "\(name): the pattern holds white")
            XCTAssertEqual(after, before, "\(name) through the GPU")
        }
    }

    /// Grey of every depth, limited or full range, with alpha or without, comes back sample for
    /// sample through the GPU: every code of the depth is in the picture. (9-bit limited grey
    /// lost a code at every other pixel above half scale: its way back was converted as full
    /// range and dithered; 16-bit grey with alpha went through swscale's grey-to-RGB and moved
    /// codes above 20000 by up to 6.)
    func testGreyOfEveryDepthAndRangeComesBackExact() throws {
        let scratch = try Scratch()
        let cases: [(format: String, depth: Int, file: String)] = [
            ("gray", 8, "mkv"), ("gray9le", 9, "mkv"), ("gray10le", 10, "mkv"), ("gray12le", 12, "mkv"),
            ("gray16le", 16, "mkv"), ("ya8", 8, "png"), ("ya16be", 16, "png"),
        ]
        for (format, depth, file) in cases {
            for range in file == "png" ? ["pc"] : ["tv", "pc"] {
                let input = scratch.path("\(format)-\(range).\(file)"), output = scratch.path("out-\(format)-\(range).\(file)")
                // 256 x 256 samples written as they are: with 16 bits X + 256 Y takes every code once, fewer bits keep the top
                // ones; the alpha falls across the picture.
                var raw = Data()
                for y in 0..<256 {
                    for x in 0..<256 {
                        let grey = (x + 256 * y) >> (16 - depth), alpha = (255 - x) * (depth > 8 ? 257 : 1)
                        for value in format.hasPrefix("ya") ? [grey, alpha] : [grey] {
                            if depth == 8 { raw.append(UInt8(value)) } else if format.hasSuffix("be") {
                                raw.append(contentsOf: [UInt8(value >> 8), UInt8(value & 255)])
                            } else { raw.append(contentsOf: [UInt8(value & 255), UInt8(value >> 8)]) }
                        }
                    }
                }
                let rawPath = scratch.path("\(format).raw")
                try raw.write(to: URL(fileURLWithPath: rawPath))
                try Tool.ffmpeg(["-f", "rawvideo", "-pix_fmt", format, "-s", "256x256", "-i", rawPath, "-frames:v", "1", "-color_range", range]
                                + (file == "mkv" ? ["-c:v", "ffv1"] : []) + [input])
                let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--no-effects", "--quiet"]
                                          + (file == "mkv" ? ["--codec", "ffv1"] : []),
                                          environment: [RenderOptions.forcesGPURoundTripVariable: "1"])
                XCTAssertEqual(result.status, 0, result.stderr)
                let decoded = depth > 8 ? (format.hasPrefix("ya") ? "ya16le" : "gray16le") : (format.hasPrefix("ya") ? "ya8" : "gray")
                let before = try Tool.pixels(input, decoded), after = try Tool.pixels(output, decoded)
                XCTAssertEqual(try Tool.probe(output, "stream=pix_fmt"), format, "\(format) \(range): the depth is kept")
                let changed = zip(before, after).filter { $0 != $1 }.count
                XCTAssertEqual(changed, 0, "\(format) \(range) through the GPU: \(changed) bytes changed")
            }
        }
    }

    /// RGB of 5 or 4 bits a component widens as ffmpeg widens it, repeating the high bits
    /// (white stays 255; the bit-exact swscale path shifted: 31 -> 248).
    func testFewBitRGBWidensAsFFmpegDoes() throws {
        let scratch = try Scratch()
        for format in ["rgb555le", "rgb565le", "rgb444le"] {
            let input = scratch.path("\(format).bmp"), output = scratch.path("\(format).png"), reference = scratch.path("\(format)-ffmpeg.png")
            try Tool.ffmpeg(["-f", "lavfi", "-i", "nullsrc=size=256x16,format=rgb24,geq=r=X:g=255-X:b=X/2", "-frames:v", "1",
                             "-pix_fmt", format, input])
            try Tool.ffmpeg(["-i", input, "-pix_fmt", "rgb24", reference])
            let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--no-effects", "--quiet"],
                                      environment: [RenderOptions.forcesGPURoundTripVariable: "1"])
            XCTAssertEqual(result.status, 0, result.stderr)
            let pixels = try Tool.pixels(output, "rgb24")
            if format != "rgb444le" { XCTAssertEqual(pixels.max(), 255, "\(format): white stays white") } // ffmpeg: 240 at 4 bits
            XCTAssertEqual(pixels, try Tool.pixels(reference, "rgb24"), format)
        }
    }

    func testEXIFOrientationIsApplied() throws {
        let scratch = try Scratch()
        let plain = scratch.path("plain.jpg"), tagged = scratch.path("tagged.jpg"), output = scratch.path("upright.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64", "-frames:v", "1", "-q:v", "2", plain])
        var jpeg = try Data(contentsOf: URL(fileURLWithPath: plain))
        jpeg.insert(contentsOf: Self.exifSegment(orientation: 6), at: 2) // right after SOI
        try jpeg.write(to: URL(fileURLWithPath: tagged))
        let result = try Tool.run(Tool.velvet, ["render", tagged, "-o", output, "--no-effects"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try Tool.probe(output, "stream=width,height"), "64,96", "orientation 6 turns the picture a quarter")
        // The upright output equals Velvet's render of the untagged JPEG, turned clockwise.
        let straight = scratch.path("straight.png"), turned = scratch.path("turned.png")
        XCTAssertEqual(try Tool.run(Tool.velvet, ["render", plain, "-o", straight, "--no-effects"]).status, 0)
        try Tool.ffmpeg(["-i", straight, "-vf", "transpose=clock", turned])
        XCTAssertEqual(try Tool.pixels(output, "rgb24"), try Tool.pixels(turned, "rgb24"))
    }

    /// A photo's ICC profile goes to the picture written from it, as ffmpeg carries it (the
    /// pixels stay in the input's colour space, so the profile still describes them).
    func testICCProfileIsKept() throws {
        let scratch = try Scratch()
        let plain = scratch.path("plain.jpg"), tagged = scratch.path("tagged.jpg")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64", "-frames:v", "1", "-q:v", "2", plain])
        var jpeg = try Data(contentsOf: URL(fileURLWithPath: plain))
        let profile = Array("velvet test profile ".utf8) + (0..<200).map { UInt8($0) }
        let payload = Array("ICC_PROFILE".utf8) + [0, 1, 1] + profile // one chunk of one
        jpeg.insert(contentsOf: [0xFF, 0xE2, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload, at: 2)
        try jpeg.write(to: URL(fileURLWithPath: tagged))
        for (name, arguments) in [("out.png", ["--no-effects"]), ("out.jpg", ["--no-effects"]), ("gpu.png", ["--preset", "glam"])] {
            let output = scratch.path(name)
            let result = try Tool.run(Tool.velvet, ["render", tagged, "-o", output, "--quiet"] + arguments,
                                      environment: [RenderOptions.forcesGPURoundTripVariable: "1"])
            XCTAssertEqual(result.status, 0, result.stderr)
            let sideData = try Tool.run("ffprobe", ["-v", "error", "-show_entries", "frame_side_data=side_data_type", "-of", "csv=p=0", output]).stdout
            XCTAssertTrue(sideData.contains("ICC profile"), "\(name): \(sideData)")
        }
    }

    /// FFmpeg 5.1 exports no EXIF tag for PNG (eXIf chunk) or TIFF (first IFD): Velvet reads
    /// the tag from the file, so both come out upright like the JPEG above.
    func testEXIFOrientationOfPNGAndTIFFIsApplied() throws {
        let scratch = try Scratch()
        let plainPNG = scratch.path("plain.png"), plainTIFF = scratch.path("plain.tif")
        for plain in [plainPNG, plainTIFF] {
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64", "-frames:v", "1", "-pix_fmt", "rgb24", plain])
        }
        var png = [UInt8](try Data(contentsOf: URL(fileURLWithPath: plainPNG)))
        png.insert(contentsOf: Self.pngChunk("eXIf", Self.exifTIFF(orientation: 8, bigEndian: true)), at: 33) // after IHDR
        let taggedPNG = scratch.path("tagged.png")
        try Data(png).write(to: URL(fileURLWithPath: taggedPNG))
        let taggedTIFF = scratch.path("tagged.tif")
        try Data(Self.addingOrientation(6, toTIFF: [UInt8](try Data(contentsOf: URL(fileURLWithPath: plainTIFF)))))
            .write(to: URL(fileURLWithPath: taggedTIFF))
        for (tagged, plain, transpose) in [(taggedPNG, plainPNG, "cclock"), (taggedTIFF, plainTIFF, "clock")] {
            let output = scratch.path("upright-\(transpose).png"), turned = scratch.path("turned-\(transpose).png")
            let result = try Tool.run(Tool.velvet, ["render", tagged, "-o", output, "--no-effects"])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(try Tool.probe(output, "stream=width,height"), "64,96", "\(tagged): a quarter turn")
            try Tool.ffmpeg(["-i", plain, "-vf", "transpose=\(transpose)", turned])
            XCTAssertEqual(try Tool.pixels(output, "rgb24"), try Tool.pixels(turned, "rgb24"), tagged)
        }
    }

    /// TIFF-structured EXIF holding only an orientation tag.
    static func exifTIFF(orientation: UInt16, bigEndian: Bool) -> [UInt8] {
        func bytes(_ value: Int, _ count: Int) -> [UInt8] {
            let little = (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
            return bigEndian ? little.reversed() : little
        }
        return (bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]) + bytes(42, 2) + bytes(8, 4) + bytes(1, 2)
            + bytes(0x0112, 2) + bytes(3, 2) + bytes(1, 4) + bytes(Int(orientation), 2) + [0, 0] + bytes(0, 4)
    }

    /// A PNG chunk: length, type, data, CRC-32 of type and data.
    static func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in Array(type.utf8) + data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        func big(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        return big(UInt32(data.count)) + Array(type.utf8) + data + big(~crc)
    }

    /// A copy of a little-endian TIFF whose first IFD, moved to the end, gains an orientation
    /// entry (the other entries' offsets stay valid: nothing before them moves).
    static func addingOrientation(_ orientation: UInt16, toTIFF file: [UInt8]) -> [UInt8] {
        func read(_ at: Int, _ count: Int) -> Int { (0..<count).reduce(0) { $0 | Int(file[at + $1]) << (8 * $1) } }
        func little(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        func read2(_ entry: [UInt8]) -> Int { Int(entry[0]) | Int(entry[1]) << 8 }
        precondition(file.starts(with: [0x49, 0x49, 0x2A, 0x00]), "FFmpeg writes little-endian TIFF")
        let directory = read(4, 4), count = read(directory, 2)
        var output = file + (file.count % 2 == 1 ? [0] : [])
        let moved = output.count
        var entries = (0..<count).map { Array(file[(directory + 2 + 12 * $0)..<(directory + 14 + 12 * $0)]) }
        entries.append(little(0x0112, 2) + little(3, 2) + little(1, 4) + little(Int(orientation), 2) + [0, 0])
        entries.sort { read2($0) < read2($1) } // FFmpeg's decoder wants the tags in order, as TIFF says
        output += little(count + 1, 2) + entries.joined() + little(0, 4)
        output.replaceSubrange(4..<8, with: little(moved, 4))
        return output
    }

    /// An APP1 segment holding only an EXIF orientation tag (little-endian TIFF).
    static func exifSegment(orientation: UInt16) -> [UInt8] {
        var tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00] // "II", 42, IFD at 8
        tiff += [0x01, 0x00]                                                 // one entry
        tiff += [0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00]            // 0x0112 Orientation, SHORT, count 1
        tiff += [UInt8(orientation & 0xFF), UInt8(orientation >> 8), 0x00, 0x00]
        tiff += [0x00, 0x00, 0x00, 0x00]                                     // no next IFD
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }
}
