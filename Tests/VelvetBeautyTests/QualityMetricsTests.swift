import Foundation
import VelvetBeauty
import VelvetFace
import VelvetTestSupport
import XCTest

/// The metrics on synthetic images where the answer is known.
final class QualityMetricsTests: XCTestCase {
    /// A face geometry to take regions from (MediaPipe's mesh on the astronaut photo).
    private func face() throws -> BeautyFace { try FaceFixture.loadGeometry("astronaut").faces[0] }

    private func noiseImage(width: Int = 512, height: Int = 512, amplitude: Float, seed: UInt64 = 7) -> RGBImage {
        var generator = SeededGenerator(state: seed)
        return RGBImage(width: width, height: height, pixels: (0..<(width * height)).map { _ in
            let n = Float(generator.next() % 1000) / 1000 - 0.5
            return SIMD3(0.6, 0.45, 0.4) + amplitude * n
        })
    }

    func testCIEDE2000KnownPairs() {
        // Reference values from Sharma, Wu and Dalal's CIEDE2000 test data.
        XCTAssertEqual(ColourDifference.ciede2000(SIMD3(50, 2.6772, -79.7751), SIMD3(50, 0, -82.7485)), 2.0425, accuracy: 1e-4)
        XCTAssertEqual(ColourDifference.ciede2000(SIMD3(50, 0, 0), SIMD3(50, -1, 2)), 2.3669, accuracy: 1e-4)
        XCTAssertEqual(ColourDifference.ciede2000(SIMD3(50, 2.5, 0), SIMD3(73, 25, -18)), 27.1492, accuracy: 1e-4)
        XCTAssertEqual(ColourDifference.ciede2000(SIMD3(60, 10, 20), SIMD3(60, 10, 20)), 0, accuracy: 1e-12)
        let white = ColourDifference.lab(fromSRGB: SIMD3(1, 1, 1))
        XCTAssertEqual(white.x, 100, accuracy: 0.01)
        XCTAssertEqual(white.y, 0, accuracy: 0.01)
        XCTAssertEqual(white.z, 0, accuracy: 0.01)
    }

    func testSSIMIsOneForIdenticalAndLowerForDegraded() {
        let x = noiseImage(width: 64, height: 64, amplitude: 0.3).luma
        let same = QualityMetrics.ssimMap(x, x).values
        XCTAssertEqual(same.min()!, 1, accuracy: 1e-4)
        let y = noiseImage(width: 64, height: 64, amplitude: 0.3, seed: 99).luma
        let mixed = PlaneImage(width: 64, height: 64, values: zip(x.values, y.values).map { 0.7 * $0 + 0.3 * $1 })
        let degraded = QualityMetrics.ssimMap(x, mixed).values.reduce(0, +) / Float(64 * 64)
        XCTAssertLessThan(degraded, 0.95)
        XCTAssertGreaterThan(degraded, 0.3)
    }

    /// Scaling every deviation from a flat colour by k scales both band energies by k^2.
    func testBandRatiosOfAScaledTexture() throws {
        let face = try face()
        let input = noiseImage(amplitude: 0.2)
        let flat = SIMD3<Float>(0.6, 0.45, 0.4)
        let output = RGBImage(width: 512, height: 512, pixels: input.pixels.map { flat + 0.5 * ($0 - flat) })
        XCTAssertEqual(try XCTUnwrap(QualityMetrics.midBandRatio(input: input, output: output, face: face)), 0.25, accuracy: 1e-3)
        XCTAssertEqual(try XCTUnwrap(QualityMetrics.fineBandRatio(input: input, output: output, face: face)), 0.25, accuracy: 1e-3)
        XCTAssertEqual(try XCTUnwrap(QualityMetrics.midBandRatio(input: input, output: input, face: face)), 1, accuracy: 1e-9)
        // A blur removes the fine band much more than the mid band.
        let blurredChannels = (0..<3).map { input.channel($0).blurred(sigma: 1.5) }
        let blurred = RGBImage(width: 512, height: 512, pixels: (0..<(512 * 512)).map {
            SIMD3(blurredChannels[0].values[$0], blurredChannels[1].values[$0], blurredChannels[2].values[$0])
        })
        let fine = try XCTUnwrap(QualityMetrics.fineBandRatio(input: input, output: blurred, face: face))
        XCTAssertLessThan(fine, 0.2)
    }

    func testHaloIsThePercentileOfTheLumaChangeOutsideTheOval() throws {
        let face = try face()
        let input = noiseImage(amplitude: 0.1)
        let delta: Float = 3.0 / 255
        let output = RGBImage(width: 512, height: 512, pixels: input.pixels.map { $0 + delta })
        let background = PlaneImage(width: 8, height: 8, values: .init(repeating: 0, count: 64))
        let halo = try XCTUnwrap(QualityMetrics.halo(input: input, output: output, face: face, personMask: background))
        XCTAssertEqual(halo.value, Double(delta), accuracy: 1e-5)
        XCTAssertGreaterThan(halo.pixels, 100)
        // Where the person mask says "person" the band is empty: not computable, never a pass.
        let person = PlaneImage(width: 8, height: 8, values: .init(repeating: 1, count: 64))
        XCTAssertNil(QualityMetrics.halo(input: input, output: output, face: face, personMask: person))
    }

    func testColourShiftOfAUniformChangeIsItsCIEDE2000() throws {
        let face = try face()
        let a = SIMD3<Float>(0.8, 0.6, 0.5), b = SIMD3<Float>(0.82, 0.6, 0.48)
        let input = RGBImage(width: 512, height: 512, pixels: .init(repeating: a, count: 512 * 512))
        let output = RGBImage(width: 512, height: 512, pixels: .init(repeating: b, count: 512 * 512))
        let expected = ColourDifference.ciede2000(ColourDifference.lab(fromSRGB: SIMD3(Double(a.x), Double(a.y), Double(a.z))),
                                                  ColourDifference.lab(fromSRGB: SIMD3(Double(b.x), Double(b.y), Double(b.z))))
        XCTAssertEqual(try XCTUnwrap(QualityMetrics.colourShift(input: input, output: output, face: face)), expected, accuracy: 1e-3)
        XCTAssertEqual(try XCTUnwrap(QualityMetrics.colourShift(input: input, output: input, face: face)), 0, accuracy: 1e-9)
    }

    func testMaxAbsDifferenceHonoursWeights() {
        let a: [UInt8] = [10, 20, 30, 255, 10, 20, 30, 255]
        let b: [UInt8] = [10, 20, 30, 255, 10, 27, 30, 255]
        XCTAssertEqual(QualityMetrics.maxAbsDifference(a, b), 7)
        XCTAssertEqual(QualityMetrics.maxAbsDifference(a, b, weights: [0, 0.5]), 0, "pixel 1 carries weight: not background")
        XCTAssertEqual(QualityMetrics.maxAbsDifference(a, b, weights: [0.5, 0]), 7)
    }

    func testPercentileAndPSNR() throws {
        XCTAssertEqual(QualityMetrics.percentile((1...100).map(Float.init), 0.99), 99)
        let a = RGBImage(width: 2, height: 1, pixels: [SIMD3(0.5, 0.5, 0.5), SIMD3(0, 0, 0)])
        let b = RGBImage(width: 2, height: 1, pixels: [SIMD3(0.6, 0.5, 0.5), SIMD3(1, 1, 1)])
        // One channel off by 0.1 out of three: MSE = 0.01 / 3.
        XCTAssertEqual(try XCTUnwrap(QualityMetrics.psnr(a, b, where: [true, false])), 10 * log10(3 / 0.01), accuracy: 1e-3)
        XCTAssertNil(QualityMetrics.psnr(a, b, where: [false, false]))
    }
}

