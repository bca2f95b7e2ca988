import Foundation
import VelvetBeauty
import VelvetFace
import VelvetGPU
import VelvetTestSupport
import XCTest

/// Teeth whitening (`TeethStage`) on real photos with the tracker's faces, through the
/// chain: teeth lighter and less yellow, never past the sclera, nothing outside the mouth
/// opening changed beyond the feather (mexico: a group, one mouth open, the others closed);
/// a closed mouth and strength 0 bit-exact.
final class TeethTests: GPUTestCase {
    /// The shipped default preset with the whitening at `strength`.
    private func stage(_ strength: Float) throws -> TeethStage {
        var preset = BeautyPreset.shippedDefault
        preset.teeth.strength = strength
        return try TeethStage(context: context, settings: preset.teeth)
    }

    private func photos(_ names: [String]) throws -> [TrackedPhoto] {
        let tracker = try FaceTracker(context: context, options: .still, files: TrackedPhoto.models)
        return try names.map { try TrackedPhoto.load($0, context: context, tracker: tracker) }
    }

    func testTeethAreWhitenedInsideTheOpeningOnly() throws {
        var lightened = 0
        for photo in try photos(["photos/obama-podium.jpg", "photos/obama.jpg", "astronaut.png", "photos/mexico.webp"]) {
            let open = TeethGeometry(faces: photo.faces)
            XCTAssertFalse(open.faces.isEmpty, "\(photo.name): an open mouth")
            let (output, changed, _) = try photo.render([try stage(1)], context: context)
            XCTAssertNotNil(changed, photo.name)
            for (index, face) in photo.faces.enumerated() where TeethGeometry(faces: [face]).faces.count == 1 {
                let figures = try XCTUnwrap(QualityMetrics.teethWhitening(input: photo.pixels, output: output, face: face),
                                            "\(photo.name) face \(index): teeth measurable")
                print("[teeth] \(photo.name) face \(index): ΔL* \(figures.lightness), Δb* \(figures.yellowness) over "
                      + "\(figures.teethPixels) px, sclera L* \(figures.sclera.map { String($0) } ?? "none (eyes closed)"), "
                      + "\(Int(figures.belowSclera * 100)) % of the teeth darker than it, past it \(figures.pastSclera)")
                // Teeth lighter than the sclera are held where they are (the 16-bit round trip moves them a little).
                if figures.belowSclera >= 0.1 {
                    XCTAssertGreaterThan(figures.lightness, 0.5, "\(photo.name): teeth lighter")
                    lightened += 1
                } else {
                    XCTAssertEqual(figures.lightness, 0, accuracy: 0.1, "\(photo.name): teeth held at the sclera's lightness")
                }
                XCTAssertLessThan(figures.yellowness, 0, "\(photo.name): teeth less yellow")
                // The stage's ceiling is measured on 0.8 L* histogram bins: within one bin and rounding.
                XCTAssertLessThanOrEqual(figures.pastSclera, 1.5, "\(photo.name): never past the sclera")
                try photo.picture(output, around: face.polygon(.lipsOuter), name: "teeth-\(URL(fileURLWithPath: photo.name).deletingPathExtension().lastPathComponent)-\(index)")
            }
            let outside = try XCTUnwrap(QualityMetrics.changeOutsideMouths(input: photo.pixels, output: output, faces: photo.faces))
            XCTAssertEqual(outside, 0, "\(photo.name): bit-exact beyond the opening's feather")
        }
        XCTAssertGreaterThan(lightened, 0, "a photo whose teeth are darker than the sclera")
    }

    /// Closed mouths: nothing is written, the render is the input bit for bit.
    func testClosedMouthIsBitExact() throws {
        for photo in try photos(["grace_hopper.jpg", "photos/biden.jpg"]) {
            XCTAssertFalse(photo.faces.isEmpty, "\(photo.name): a face")
            XCTAssertTrue(TeethGeometry(faces: photo.faces).faces.isEmpty, "\(photo.name): the mouth is closed")
            let (output, changed, _) = try photo.render([try stage(1)], context: context)
            XCTAssertNil(changed, "\(photo.name): nothing written")
            XCTAssertEqual(output, photo.pixels, "\(photo.name): bit-exact")
        }
    }

    /// Strength 0 (the shipped default's): the stage is idle, left out of the chain, and the
    /// render is bit-exact; out of range is refused.
    func testZeroStrengthIsIdentity() throws {
        let photo = try XCTUnwrap(try photos(["photos/obama.jpg"]).first)
        let idle = try stage(0)
        XCTAssertTrue(idle.isIdle)
        let (output, changed, stages) = try photo.render([idle], context: context)
        XCTAssertEqual(stages, 0, "an idle stage is left out")
        XCTAssertNil(changed)
        XCTAssertEqual(output, photo.pixels)
        XCTAssertThrowsError(try TeethStage(context: context, settings: TeethSettings(strength: 1.5)))
    }
}
