import Foundation
import VelvetBeauty
import VelvetGPU
import VelvetTestSupport
import XCTest

/// The skin pipeline on real photos with MediaPipe's geometry, judged by the metrics of
/// docs/QUALITY.md. Each test also writes before/after crops to look at
/// (/tmp/velvet-test-output/beauty or $VELVET_TEST_OUTPUT).
final class SkinPipelineQualityTests: GPUTestCase {
    struct Measured {
        var m3 = 0, m4 = 0.0, m5 = 0.0, m6 = 0.0, m8 = 0.0
        var m7: (value: Double, pixels: Int)?
    }

    private func measure(_ fixture: FaceFixture, settings: BeautySettings, label: String) throws -> (Measured, PipelineRun) {
        let run = try PipelineRunner.run(context: context, rgba: fixture.rgba, width: fixture.width, height: fixture.height,
                                         faces: fixture.faces, personMask: fixture.personMask, settings: settings)
        let input = fixture.rgb
        let output = try RGBImage(rgba8: run.output, width: fixture.width, height: fixture.height)
        let face = fixture.faces[0]
        var measured = Measured()
        measured.m3 = QualityMetrics.maxAbsDifference(fixture.rgba, run.output, weights: run.weights)
        measured.m4 = try XCTUnwrap(QualityMetrics.featureSSIM(input: input, output: output, face: face))
        measured.m5 = try XCTUnwrap(QualityMetrics.midBandRatio(input: input, output: output, face: face))
        measured.m6 = try XCTUnwrap(QualityMetrics.fineBandRatio(input: input, output: output, face: face))
        measured.m7 = QualityMetrics.halo(input: input, output: output, face: face, personMask: fixture.personMask)
        measured.m8 = try XCTUnwrap(QualityMetrics.colourShift(input: input, output: output, face: face))
        let m7 = measured.m7.map { String(format: "%.4f (%.2f/255, %d px)", $0.value, $0.value * 255, $0.pixels) } ?? "not computable (empty band)"
        print(String(format: "[metrics] %@ %@: M3 %d, M4 %.4f, M5 %.3f, M6 %.3f, M8 %.3f, M7 %@", fixture.name, label,
                     measured.m3, measured.m4, measured.m5, measured.m6, measured.m8, m7))
        print("[timing] \(fixture.name) \(label): " + run.timings.sections.map { String(format: "%@ %.2f ms", $0.label, $0.milliseconds) }
            .joined(separator: ", "))
        try writeCrops(fixture, output: run.output, label: label)
        let maskPixels = run.mask.flatMap { m -> [UInt8] in
            [UInt8(min(255, max(0, m.x * 255))), UInt8(min(255, max(0, m.x * m.y * 255))), UInt8(min(255, max(0, m.z * 255))), 255]
        }
        try ImageWriter.png(maskPixels, width: run.maskWidth, height: run.maskHeight, name: "\(fixture.name)-\(label)-mask")
        return (measured, run)
    }

    private func writeCrops(_ fixture: FaceFixture, output: [UInt8], label: String) throws {
        let face = fixture.faces[0]
        let size = face.faceSize
        let low = face.centre - 0.62 * size, high = face.centre + 0.62 * size
        let x0 = max(0, Int(low.x)), y0 = max(0, Int(low.y))
        let region = PixelRegion(x: x0, y: y0, width: min(fixture.width, Int(high.x)) - x0, height: min(fixture.height, Int(high.y)) - y0)
        let pixels = ImageWriter.sideBySide([fixture.rgba, output], width: fixture.width, region: region)
        let path = try ImageWriter.png(pixels, width: region.width * 2, height: region.height,
                                       name: "\(fixture.name)-\(label)-before-after", scale: fixture.faces[0].faceSize < 150 ? 3 : 2)
        print("[crop] \(path)")
    }

    /// The product's default preset (what a render with no options uses), each smoothing
    /// method: M3 outside the grown face ovals, M4, M7 (must be computable: a metric that
    /// cannot be computed fails), M5 to the bar or as far as full strength takes it (the
    /// strength fit's contract), M6 for frequency separation, M8.
    private func checkDefaults(_ name: String) throws {
        let fixture = try FaceFixture.load(name)
        for smoothing in BeautySettings.Smoothing.allCases {
            var preset = BeautyPreset.shippedDefault
            preset.skin.smoothing = smoothing
            let settings = preset.skinSettings()
            let label = smoothing.rawValue
            let (measured, run) = try measure(fixture, settings: settings, label: label)
            let background = QualityMetrics.backgroundDifference(input: fixture.rgba, output: run.output, width: fixture.width,
                                                                 height: fixture.height, faces: fixture.faces)
            XCTAssertEqual(try XCTUnwrap(background), 0, "\(name) \(label): M3 background must be bit-exact")
            XCTAssertEqual(measured.m3, 0, "\(name) \(label): nothing changes where the blend weight is 0")
            XCTAssertGreaterThanOrEqual(measured.m4, 0.98, "\(name) \(label): M4 features kept")
            var full = settings
            full.strength = 1
            let (strongest, _) = try measure(fixture, settings: full, label: "\(label)-full")
            XCTAssertTrue(measured.m5 <= 0.5 || measured.m5 <= strongest.m5 + 0.02,
                          "\(name) \(label): M5 \(measured.m5) should reach 0.5 or full strength's \(strongest.m5)")
            if smoothing == .frequencySeparation {
                XCTAssertGreaterThanOrEqual(measured.m6, 0.6, "\(name) \(label): M6 texture kept")
            }
            XCTAssertLessThanOrEqual(measured.m8, 1.0, "\(name) \(label): M8 colour kept")
            let m7 = try XCTUnwrap(measured.m7, "\(name) \(label): M7 must be computable")
            XCTAssertLessThanOrEqual(m7.value, 1.0 / 255 + 1e-6, "\(name) \(label): M7 no halo")
        }
    }

    func testAstronautDefaults() throws { try checkDefaults("astronaut") }
    func testGraceHopperDefaults() throws { try checkDefaults("grace_hopper") }
}

/// The fast bilateral grid against the brute-force reference, and the exactness guarantees.
final class SkinPipelineExactnessTests: GPUTestCase {
    /// PSNR of the grid's smoothed image against the exact bilateral's, over the pixels
    /// the skin mask reaches (weight > 0), at the defaults and at a larger radius.
    /// At several range sigmas (the grid's range cells follow sigma, so each is its own grid)
    /// and two radii. `BilateralReferenceTests` checks the exact filter against the CPU formula.
    func testFastBilateralMatchesExact() throws {
        let standard = BeautySettings.standard
        let configurations: [(maxRadius: Float, rangeSigma: Float)] =
            [0.05, 0.1, 0.3, 0.5].map { (standard.maxRadius, $0) } + [(0.2, standard.rangeSigma)]
        for name in ["astronaut", "grace_hopper"] {
            let fixture = try FaceFixture.load(name)
            for (maxRadius, rangeSigma) in configurations {
                var settings = BeautySettings.standard
                settings.smoothing = .bilateral
                settings.maxRadius = maxRadius
                settings.rangeSigma = rangeSigma
                settings.bilateral = .grid
                let fast = try PipelineRunner.run(context: context, rgba: fixture.rgba, width: fixture.width, height: fixture.height,
                                                  faces: fixture.faces, personMask: fixture.personMask, settings: settings)
                settings.bilateral = .exact
                let exact = try PipelineRunner.run(context: context, rgba: fixture.rgba, width: fixture.width, height: fixture.height,
                                                   faces: fixture.faces, personMask: fixture.personMask, settings: settings)
                let inside = exact.weights.map { $0 > 0 }
                XCTAssertGreaterThan(inside.filter { $0 }.count, 1000, "\(name): the mask must cover skin")
                let smoothedPSNR = try XCTUnwrap(QualityMetrics.psnr(try XCTUnwrap(fast.processed), try XCTUnwrap(exact.processed),
                                                                     where: inside))
                let outputPSNR = try XCTUnwrap(QualityMetrics.psnr(try RGBImage(rgba8: fast.output, width: fixture.width, height: fixture.height),
                                                                   try RGBImage(rgba8: exact.output, width: fixture.width, height: fixture.height),
                                                                   where: inside))
                print(String(format: "[psnr] %@ maxRadius %.2f range sigma %.2f: grid vs exact smoothed %.2f dB, output %.2f dB; exact %.1f ms, grid %.1f ms",
                             name, maxRadius, rangeSigma, smoothedPSNR, outputPSNR, exact.timings[SkinPipeline.Section.smoothing] ?? -1,
                             fast.timings[SkinPipeline.Section.smoothing] ?? -1))
                XCTAssertGreaterThanOrEqual(smoothedPSNR, 40, "\(name) maxRadius \(maxRadius) range sigma \(rangeSigma): grid vs exact")
            }
        }
    }

    /// M9: every strength at 0 gives the input back exactly (both methods).
    func testIdentityAtZeroStrength() throws {
        for name in ["astronaut", "grace_hopper"] {
            let fixture = try FaceFixture.load(name)
            for smoothing in BeautySettings.Smoothing.allCases {
                var settings = BeautySettings.off
                settings.smoothing = smoothing
                let run = try PipelineRunner.run(context: context, rgba: fixture.rgba, width: fixture.width, height: fixture.height,
                                                 faces: fixture.faces, personMask: fixture.personMask, settings: settings)
                XCTAssertEqual(QualityMetrics.maxAbsDifference(fixture.rgba, run.output), 0, "\(name) \(smoothing): M9")
                XCTAssertEqual(run.weights.max(), 0, "\(name) \(smoothing): no pixel may carry weight")
            }
        }
    }

    /// M14: a frame without a face (a background crop of the photo, and the whole photo
    /// with no faces given) comes out bit-exact with every effect on, sharpen included.
    func testNoFaceNoChange() throws {
        let fixture = try FaceFixture.load("astronaut")
        // The top-right corner of the astronaut photo holds wall and the shuttle model, no face.
        let region = PixelRegion(x: 352, y: 0, width: 160, height: 160)
        let crop = ImageWriter.sideBySide([fixture.rgba], width: fixture.width, region: region)
        var settings = BeautySettings.standard
        for smoothing in BeautySettings.Smoothing.allCases {
            settings.smoothing = smoothing
            let cropRun = try PipelineRunner.run(context: context, rgba: crop, width: region.width, height: region.height,
                                                 faces: [], personMask: nil, settings: settings)
            XCTAssertEqual(QualityMetrics.maxAbsDifference(crop, cropRun.output), 0, "M14 on a background crop (\(smoothing))")
            let wholeRun = try PipelineRunner.run(context: context, rgba: fixture.rgba, width: fixture.width, height: fixture.height,
                                                  faces: [], personMask: fixture.personMask, settings: settings)
            XCTAssertEqual(QualityMetrics.maxAbsDifference(fixture.rgba, wholeRun.output), 0, "M14 with no faces (\(smoothing))")
        }
    }

    /// The optional sharpen changes the frame only when asked for, and then globally.
    func testSharpenIsOffByDefaultAndGlobalWhenOn() throws {
        let fixture = try FaceFixture.load("astronaut")
        var settings = BeautySettings.off
        settings.sharpen = 1
        let run = try PipelineRunner.run(context: context, rgba: fixture.rgba, width: fixture.width, height: fixture.height,
                                         faces: fixture.faces, personMask: fixture.personMask, settings: settings)
        XCTAssertEqual(BeautySettings.standard.sharpen, 0)
        // The background (far from the face) changes too: the sharpen is global.
        let corner = ImageWriter.sideBySide([run.output], width: fixture.width, region: PixelRegion(x: 352, y: 0, width: 160, height: 160))
        let original = ImageWriter.sideBySide([fixture.rgba], width: fixture.width, region: PixelRegion(x: 352, y: 0, width: 160, height: 160))
        XCTAssertGreaterThan(QualityMetrics.maxAbsDifference(original, corner), 0)
    }
}
