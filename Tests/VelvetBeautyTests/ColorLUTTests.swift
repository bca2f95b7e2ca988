import Foundation
import VelvetBeauty
import VelvetGPU
import VelvetTestSupport
import XCTest

/// Largest channel magnitude.
private func largest(_ value: SIMD3<Float>) -> Float { max(abs(value.x), abs(value.y), abs(value.z)) }

final class ColorLUTTests: GPUTestCase {
    // MARK: - .cube parsing

    func testParsesTitleDomainCommentsAndData() throws {
        var text = "# made by hand\nTITLE \"Tiny\"\nLUT_3D_SIZE 2\nDOMAIN_MIN 0 0 0\nDOMAIN_MAX 1 1 1\n\n"
        for point in ColorLUT.identity(size: 2).entries { text += "\(point.x) \(point.y) \(point.z)  # entry\n" }
        let lut = try CubeLUTParser.parse(text, path: "tiny.cube")
        XCTAssertEqual(lut.title, "Tiny")
        XCTAssertEqual(lut.size, 2)
        XCTAssertEqual(lut.entries, ColorLUT.identity(size: 2).entries)
    }

    func testMalformedFilesNameTheFileAndLine() {
        let cases: [(String, String)] = [
            ("LUT_3D_SIZE 2\n0 0 0\n", "1 table entries, expected 8"),
            ("LUT_3D_SIZE 2\n0 0 zero\n", "bad.cube:2: 'zero' is not a number"),
            ("LUT_3D_SIZE 66\n", "bad.cube:1: LUT_3D_SIZE must be an integer in 2...65"),
            ("LUT_1D_SIZE 1024\n", "bad.cube:1: 1D LUTs are not supported"),
            ("0 0 0\nLUT_3D_SIZE 2\n", "bad.cube:1: table data before LUT_3D_SIZE"),
            ("LUT_3D_SIZE 2\nFROBNICATE 1\n", "bad.cube:2: unknown keyword 'FROBNICATE'"),
            ("TITLE \"nothing\"\n", "no LUT_3D_SIZE line"),
            ("LUT_3D_SIZE 2\n0 0\n", "bad.cube:2: expected 3 numbers, found 2"),
            ("LUT_3D_SIZE 2\nDOMAIN_MIN 1 1 1\nDOMAIN_MAX 0 0 0\n" + String(repeating: "0 0 0\n", count: 8), "DOMAIN_MAX must exceed"),
            ("LUT_3D_SIZE 2\n" + String(repeating: "0 0 0\n", count: 9), "bad.cube:10: more than 8 table entries"),
            ("LUT_3D_SIZE 2\n" + String(repeating: "nan 0 0\n", count: 8), "'nan' is not a number"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try CubeLUTParser.parse(text, path: "bad.cube")) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(error) should contain \(expected)")
                XCTAssertFalse("\(error)".contains("\n"), "one line")
            }
        }
        XCTAssertThrowsError(try CubeLUTParser.load("/nonexistent/x.cube")) { XCTAssertTrue("\($0)".contains("/nonexistent/x.cube")) }
    }

    func testLookupImageBecomesATable() throws {
        // An identity lookup image: tile (blue % 8, blue / 8), x = red, y = green.
        var pixels = [SIMD3<Float>](repeating: .zero, count: 512 * 512)
        for y in 0..<512 { for x in 0..<512 {
            let blue = (y / 64) * 8 + x / 64
            pixels[y * 512 + x] = SIMD3(Float(x % 64), Float(y % 64), Float(blue)) / 63
        } }
        let lut = try ColorLUT.fromLookupImage(pixels, width: 512, height: 512, path: "lookup.png")
        XCTAssertEqual(lut.size, 64)
        for (entry, expected) in zip(lut.entries, ColorLUT.identity(size: 64).entries) {
            XCTAssertLessThan(largest(entry - expected), 1e-6)
        }
        XCTAssertThrowsError(try ColorLUT.fromLookupImage(pixels, width: 256, height: 1024, path: "wrong.png"))
    }

    // MARK: - GPU application

    /// A warm, brightening grade (what the shipped LUTs look like).
    private let warm = ColorLUT.generated(title: "warm", size: 17) { c in
        SIMD3(min(c.x * 1.08 + 0.02, 1), c.y * 1.02 + 0.01, c.z * 0.92)
    }

    private func testImage() throws -> (GPUImage, [SIMD3<Float>]) {
        let width = 37, height = 23
        var random = SeededGenerator(state: 9)
        let colours = (0..<(width * height)).map { _ in
            SIMD3<Float>(Float.random(in: 0...1, using: &random), Float.random(in: 0...1, using: &random), Float.random(in: 0...1, using: &random))
        }
        let image = try GPUImage(context: context, width: width, height: height, format: .rgba32f)
        let recorder = try CommandRecorder(context: context)
        var texels: [Float] = []
        for colour in colours { texels += [colour.x, colour.y, colour.z, 1] }
        try texels.withUnsafeBytes { try recorder.upload($0, to: image) }
        try recorder.submit().wait()
        return (image, colours)
    }

    private func grade(_ lut: ColorLUT, strength: Float, mask: GPUImage? = nil) throws -> [SIMD3<Float>] {
        let (source, _) = try testImage()
        let destination = try GPUImage(context: context, width: source.width, height: source.height, format: .rgba32f)
        let recorder = try CommandRecorder(context: context)
        try ColorGrading(context: context, lut: lut).record(on: recorder, source: source, destination: destination, mask: mask, strength: strength)
        let readback = try recorder.download(destination)
        try recorder.submit().wait()
        let floats = readback.raw.bindMemory(to: Float.self)
        return (0..<(source.width * source.height)).map { SIMD3(floats[$0 * 4], floats[$0 * 4 + 1], floats[$0 * 4 + 2]) }
    }

    func testGPUMatchesTheCPUTrilinearReference() throws {
        let (_, colours) = try testImage()
        let graded = try grade(warm, strength: 1)
        let worst = zip(graded, colours).map { largest($0 - warm.apply($1)) }.max() ?? 1
        XCTAssertLessThan(worst, 2e-3)
        let identity = try grade(.identity(size: 33), strength: 1)
        XCTAssertLessThan(zip(identity, colours).map { largest($0 - $1) }.max() ?? 1, 2e-3)
    }

    func testStrengthScalesTheEffectSmoothlyFromExactIdentity() throws {
        let (_, colours) = try testImage()
        XCTAssertEqual(try grade(warm, strength: 0), colours, "strength 0 is bit-exact")
        let full = zip(try grade(warm, strength: 1), colours).map { $0 - $1 }
        for strength in [0.01, 0.25, 0.5, 0.75] as [Float] {
            let partial = zip(try grade(warm, strength: strength), colours).map { $0 - $1 }
            let worst = zip(partial, full).map { largest($0 - strength * $1) }.max() ?? 1
            XCTAssertLessThan(worst, 1e-4, "strength \(strength) must give \(strength) of the change")
        }
    }

    func testMaskLimitsTheEffect() throws {
        let (source, colours) = try testImage()
        let mask = try GPUImage(context: context, width: source.width, height: source.height, format: .r32f)
        let weights = (0..<(source.width * source.height)).map { Float(($0 % source.width) < source.width / 2 ? 0 : 1) }
        let recorder = try CommandRecorder(context: context)
        try weights.withUnsafeBytes { try recorder.upload($0, to: mask) }
        try recorder.submit().wait()
        let graded = try grade(warm, strength: 1, mask: mask)
        for (index, colour) in colours.enumerated() where index % source.width < source.width / 2 - 1 {
            XCTAssertEqual(graded[index], colour, "weight 0 leaves the pixel exactly")
        }
    }
}

final class BuiltInLUTTests: XCTestCase {
    func testBuiltInsRoundTripThroughCubeTextAndKeepBlackAndWhite() throws {
        for builtIn in BuiltInLUT.allCases {
            let lut = builtIn.lut
            let parsed = try CubeLUTParser.parse(lut.cubeText, path: "\(builtIn.rawValue).cube")
            XCTAssertEqual(parsed.size, lut.size)
            XCTAssertLessThan(zip(parsed.entries, lut.entries).map { largest($0 - $1) }.max() ?? 1, 1e-5)
            if builtIn != .softMatte {
                XCTAssertLessThan(largest(lut.apply(.zero)), 1e-6, "\(builtIn) keeps black")
                XCTAssertLessThan(largest(lut.apply(.one) - .one), 1e-6, "\(builtIn) keeps white")
            }
            XCTAssertGreaterThan(largest(lut.apply(SIMD3(repeating: 0.5)) - SIMD3(repeating: 0.5)), 0.01, "\(builtIn) changes mid-tones")
        }
    }
}
