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

    /// Under-eye: an unchanged output keeps the gap and the fine band; the trough cores lit by
    /// hand close the gap, replaced by their 5x5 mean lose the fine band; a change outside the
    /// troughs is seen.
    func testTheUnderEyeMetricSeesAChangeAndNoChange() throws {
        let fixture = try FaceFixture.load("astronaut")
        let face = try XCTUnwrap(fixture.faces.first)
        let input = fixture.rgb
        let same = try XCTUnwrap(QualityMetrics.underEye(input: input, output: input, face: face))
        XCTAssertEqual(same.count, 2, "both eyes open")
        for eye in same {
            XCTAssertEqual(eye.gapAfter, eye.gapBefore)
            XCTAssertEqual(eye.fineBand, 1, accuracy: 1e-12)
        }
        XCTAssertEqual(QualityMetrics.changeOutsideUnderEyes(input: input, output: input, faces: fixture.faces), 0)

        let eyes = UnderEyeGeometry(faces: [face]).eyes
        var lit = input, flat = input
        for y in 0..<input.height {
            for x in 0..<input.width where eyes.contains(where: { $0.isCore(SIMD2(Float(x) + 0.5, Float(y) + 0.5)) }) {
                let i = y * input.width + x
                lit.pixels[i] = pointwiseMin(input.pixels[i] + 0.08, SIMD3(repeating: 1))
                var sum = SIMD3<Float>.zero
                for dy in -2...2 { for dx in -2...2 { sum += input.pixels[(y + dy) * input.width + x + dx] } }
                flat.pixels[i] = sum / 25
            }
        }
        for (before, after) in zip(same, try XCTUnwrap(QualityMetrics.underEye(input: input, output: lit, face: face))) {
            XCTAssertLessThan(after.gapAfter, before.gapBefore - 1, "a lighter trough narrows the gap")
        }
        for eye in try XCTUnwrap(QualityMetrics.underEye(input: input, output: flat, face: face)) {
            XCTAssertLessThan(eye.fineBand, 0.6, "a blurred trough has lost its fine band")
        }
        var moved = input
        moved.pixels[0] += SIMD3(repeating: 0.1)
        XCTAssertGreaterThan(try XCTUnwrap(QualityMetrics.changeOutsideUnderEyes(input: input, output: moved, faces: fixture.faces)), 0)
    }
}
