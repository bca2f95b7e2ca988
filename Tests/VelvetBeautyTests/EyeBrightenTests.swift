import Foundation
import VelvetBeauty
import VelvetFace
import VelvetGPU
import VelvetTestSupport
import XCTest

/// Eye brightening (`EyeBrightenStage`) on real photos with the tracker's faces, through the
/// chain: the sclera lighter and less red, the iris's contrast up, the lids' band kept (SSIM >= 0.98), nothing
/// outside the open eyes' contours changed; strength 0 bit-exact.
final class EyeBrightenTests: GPUTestCase {
    private func stage(_ strength: Float) throws -> EyeBrightenStage {
        var preset = BeautyPreset.shippedDefault
        preset.eyeBrighten.strength = strength
        return try EyeBrightenStage(context: context, settings: preset.eyeBrighten)
    }

    func testScleraBrighterLidsKeptNothingOutsideTheEyes() throws {
        let tracker = try FaceTracker(context: context, options: .still, files: TrackedPhoto.models)
        var measured = 0
        for name in ["astronaut.png", "grace_hopper.jpg", "photos/obama.jpg", "photos/obama-podium.jpg"] {
            let photo = try TrackedPhoto.load(name, context: context, tracker: tracker)
            XCTAssertFalse(photo.faces.isEmpty, "\(name): a face")
            let (output, changed, _) = try photo.render([try stage(1)], context: context)
            let eyes = photo.faces.flatMap { TeethGeometry.openEyes(of: $0) }
            XCTAssertEqual(changed == nil, eyes.isEmpty, "\(name): written only with an open eye")
            for (index, face) in photo.faces.enumerated() {
                guard let figures = QualityMetrics.eyeBrightening(input: photo.pixels, output: output, face: face) else { continue }
                measured += 1
                print("[eyes] \(name) face \(index): sclera ΔL* \(figures.scleraLightness), Δa* \(figures.scleraRedness) over "
                      + "\(figures.scleraPixels) px, iris contrast x\(figures.irisContrast), eyelid band SSIM \(figures.lidSSIM)")
                XCTAssertGreaterThan(figures.scleraLightness, 0, "\(name): sclera lighter")
                XCTAssertLessThan(figures.scleraRedness, 0, "\(name): sclera less red")
                XCTAssertGreaterThan(figures.irisContrast, 1, "\(name): iris contrast lifted")
                XCTAssertGreaterThanOrEqual(figures.lidSSIM, 0.98, "\(name): eyelid band kept")
                let contours = TeethGeometry.openEyes(of: face)
                try photo.picture(output, around: contours.flatMap { $0 },
                                  name: "eyes-\(URL(fileURLWithPath: name).deletingPathExtension().lastPathComponent)-\(index)")
            }
            // Bit-exact on and outside every open eye's contour.
            var worst: Float = 0
            for y in 0..<output.height {
                for x in 0..<output.width {
                    let i = y * output.width + x
                    guard output.pixels[i] != photo.pixels.pixels[i] else { continue }
                    let p = SIMD2(Float(x) + 0.5, Float(y) + 0.5)
                    if eyes.contains(where: { RegionMask.signedDistance(p, $0) < 0 }) { continue }
                    let difference = output.pixels[i] - photo.pixels.pixels[i]
                    worst = max(worst, difference.max(), -difference.min())
                }
            }
            XCTAssertEqual(worst, 0, "\(name): nothing changed outside the eyes")
        }
        XCTAssertGreaterThan(measured, 2, "faces with open eyes measured")
    }

    func testZeroStrengthIsIdentity() throws {
        let tracker = try FaceTracker(context: context, options: .still, files: TrackedPhoto.models)
        let photo = try TrackedPhoto.load("astronaut.png", context: context, tracker: tracker)
        let idle = try stage(0)
        XCTAssertTrue(idle.isIdle)
        let (output, changed, stages) = try photo.render([idle], context: context)
        XCTAssertEqual(stages, 0, "an idle stage is left out")
        XCTAssertNil(changed)
        XCTAssertEqual(output, photo.pixels)
        XCTAssertThrowsError(try EyeBrightenStage(context: context, settings: EyeBrightenSettings(strength: -0.1)))
    }
}
