import VelvetBeauty
import XCTest

/// The retouch metrics (teeth, eyes, shine) can fail: on the astronaut photo and its MediaPipe mesh, an unchanged
/// output measures no change, and a change made by hand where a metric looks is seen.
final class RetouchMetricsTests: XCTestCase {
    func testTheMetricsSeeAChangeAndNoChange() throws {
        let fixture = try FaceFixture.load("astronaut")
        let face = try XCTUnwrap(fixture.faces.first)
        let input = fixture.rgb
        let same = try XCTUnwrap(QualityMetrics.teethWhitening(input: input, output: input, face: face))
        XCTAssertEqual(same.lightness, 0)
        XCTAssertEqual(same.yellowness, 0)
        XCTAssertEqual(QualityMetrics.changeOutsideMouths(input: input, output: input, faces: fixture.faces), 0)
        let eyes = try XCTUnwrap(QualityMetrics.eyeBrightening(input: input, output: input, face: face))
        XCTAssertEqual(eyes.scleraLightness, 0)
        XCTAssertEqual(eyes.irisContrast, 1, accuracy: 1e-12)
        XCTAssertEqual(eyes.lidSSIM, 1, accuracy: 1e-6)

        // Every pixel a little lighter and bluer: the teeth read lighter and less yellow, and
        // the pixels away from the mouths count as changed; every other pixel darkened to
        // half: the eyelid band's structure is not kept.
        var brighter = input
        brighter.pixels = input.pixels.map { SIMD3(min($0.x + 0.02, 1), min($0.y + 0.02, 1), min($0.z + 0.06, 1)) }
        let whiter = try XCTUnwrap(QualityMetrics.teethWhitening(input: input, output: brighter, face: face))
        XCTAssertGreaterThan(whiter.lightness, 0)
        XCTAssertLessThan(whiter.yellowness, 0)
        XCTAssertGreaterThan(try XCTUnwrap(QualityMetrics.changeOutsideMouths(input: input, output: brighter, faces: fixture.faces)), 0)
        var flat = input
        for (index, pixel) in input.pixels.enumerated() where index % 2 == 0 { flat.pixels[index] = pixel * 0.5 }
        let striped = try XCTUnwrap(QualityMetrics.eyeBrightening(input: input, output: flat, face: face))
        XCTAssertLessThan(striped.lidSSIM, 0.98, "a striped eyelid band is not kept")

        // Shine: unchanged, the peak and the fine band stay; every pixel darker by a tenth, the
        // peak falls and the texture stays; the frame blurred, the fine band is gone.
        let still = try XCTUnwrap(QualityMetrics.shineReduction(input: input, output: input, face: face))
        XCTAssertEqual(still.peakOut, still.peakIn)
        XCTAssertEqual(still.fineBand, 1, accuracy: 1e-12)
        var darker = input
        darker.pixels = input.pixels.map { $0 * 0.9 }
        let dimmed = try XCTUnwrap(QualityMetrics.shineReduction(input: input, output: darker, face: face))
        XCTAssertLessThan(dimmed.peakOut, dimmed.peakIn)
        XCTAssertGreaterThan(dimmed.fineBand, 0.6)
        let blurred = input.luma.blurred(sigma: 3)
        var smooth = input
        smooth.pixels = blurred.values.map { SIMD3(repeating: $0) }
        XCTAssertLessThan(try XCTUnwrap(QualityMetrics.shineReduction(input: input, output: smooth, face: face)).fineBand, 0.6,
                          "a blurred frame keeps no fine band")
    }
}
