import Foundation
import VelvetBeauty
import VelvetFace
import VelvetGPU
import VelvetTestSupport
import XCTest

/// The under-eye retouch (`UnderEyeStage`) on real photos with the tracker's faces, through
/// the chain: where the trough is darker than the cheek below it, the gap at least halved at
/// strength 1 with the fine band kept (M6-style ratio >= 0.6), per eye; a face with no
/// measurable gap not made worse; nothing outside the troughs' loops changed; strength 0 bit-exact.
final class UnderEyeTests: GPUTestCase {
    /// A gap smaller than this (L*) is no dark circle to lift.
    private let measurableGap = 1.0
    private let minimumIOD: Float = 40

    private func stage(_ strength: Float) throws -> UnderEyeStage {
        var preset = BeautyPreset.shippedDefault
        preset.underEye.strength = strength
        return try UnderEyeStage(context: context, settings: preset.underEye)
    }

    func testDarkCirclesLiftedTextureKeptNothingOutside() throws {
        let tracker = try FaceTracker(context: context, options: .still, files: TrackedPhoto.models)
        var lifted = 0, level = 0
        for name in ["photos/obama.jpg", "photos/biden.jpg", "photos/dahlgren.jpg", "grace_hopper.jpg"] {
            let photo = try TrackedPhoto.load(name, context: context, tracker: tracker)
            XCTAssertFalse(photo.faces.isEmpty, "\(name): a face")
            let (output, changed, _) = try photo.render([try stage(1)], context: context)
            XCTAssertEqual(changed == nil, UnderEyeGeometry(faces: photo.faces).eyes.isEmpty, "\(name): written only below an open eye")
            // Faces large enough to measure; the stage leaves an eye whose core or cheek band is under minimumPixels.
            for (index, face) in photo.faces.enumerated() where face.interOcularDistance >= minimumIOD && !UnderEyeGeometry(faces: [face]).eyes.isEmpty {
                let perEye = try XCTUnwrap(QualityMetrics.underEye(input: photo.pixels, output: output, face: face),
                                           "\(name) face \(index): under-eye measurable")
                for (eye, figures) in perEye.enumerated()
                    where figures.troughPixels >= UnderEyeGeometry.minimumPixels && figures.cheekPixels >= UnderEyeGeometry.minimumPixels {
                    print("[under-eye] \(name) face \(index) eye \(eye): gap to the cheek L* \(figures.gapBefore) -> \(figures.gapAfter) "
                          + "over \(figures.troughPixels) / \(figures.cheekPixels) px, fine band x\(figures.fineBand)")
                    XCTAssertGreaterThanOrEqual(figures.fineBand, 0.6, "\(name): fine band kept")
                    if figures.gapBefore >= measurableGap {
                        XCTAssertLessThanOrEqual(figures.gapAfter, 0.5 * figures.gapBefore, "\(name): gap at least halved")
                        XCTAssertGreaterThanOrEqual(figures.gapAfter, 0, "\(name): not lifted past the cheek")
                        lifted += 1
                    } else {
                        XCTAssertLessThanOrEqual(abs(figures.gapAfter), abs(figures.gapBefore) + 0.1, "\(name): no gap, not made worse")
                        level += 1
                    }
                }
                let eyes = UnderEyeGeometry(faces: [face]).eyes
                try photo.picture(output, around: eyes.flatMap { $0.trough + $0.cheek },
                                  name: "under-eye-\(URL(fileURLWithPath: name).deletingPathExtension().lastPathComponent)-\(index)")
            }
            let outside = try XCTUnwrap(QualityMetrics.changeOutsideUnderEyes(input: photo.pixels, output: output, faces: photo.faces))
            XCTAssertEqual(outside, 0, "\(name): bit-exact outside the troughs")
        }
        XCTAssertGreaterThanOrEqual(lifted, 4, "eyes with dark circles measured")
        print("[under-eye] \(lifted) eyes with a gap, \(level) without")
    }

    /// No photo of the set has a face without dark circles, so the face is made one: gramps-o4
    /// (gaps of 2 L*) after one pass at strength 1. A second pass, judged against the first's
    /// output, must not widen the gap or lose the fine band.
    func testNoGapIsNotMadeWorse() throws {
        let tracker = try FaceTracker(context: context, options: .still, files: TrackedPhoto.models)
        let photo = try TrackedPhoto.load("photos/gramps-o4.jpg", context: context, tracker: tracker)
        let face = try XCTUnwrap(photo.faces.first, "a face")
        let once = try photo.render([try stage(1)], context: context).pixels
        let twice = try photo.render([try stage(1), try stage(1)], context: context).pixels
        let perEye = try XCTUnwrap(QualityMetrics.underEye(input: once, output: twice, face: face), "under-eye measurable")
        XCTAssertEqual(perEye.count, 2, "both eyes open")
        for (eye, figures) in perEye.enumerated() {
            print("[under-eye] gramps-o4 after one pass, eye \(eye): gap L* \(figures.gapBefore) -> \(figures.gapAfter), fine band x\(figures.fineBand)")
            XCTAssertLessThan(abs(figures.gapBefore), measurableGap, "eye \(eye): no measurable gap left after one pass")
            XCTAssertLessThanOrEqual(abs(figures.gapAfter), abs(figures.gapBefore) + 0.1, "eye \(eye): not made worse")
            XCTAssertGreaterThanOrEqual(figures.fineBand, 0.6, "eye \(eye): fine band kept")
        }
    }

    /// Strength 0 (the shipped default's): the stage is idle, left out of the chain, and the
    /// render is bit-exact; out of range is refused.
    func testZeroStrengthIsIdentity() throws {
        let tracker = try FaceTracker(context: context, options: .still, files: TrackedPhoto.models)
        let photo = try TrackedPhoto.load("photos/obama.jpg", context: context, tracker: tracker)
        let idle = try stage(0)
        XCTAssertTrue(idle.isIdle)
        let (output, changed, stages) = try photo.render([idle], context: context)
        XCTAssertEqual(stages, 0, "an idle stage is left out")
        XCTAssertNil(changed)
        XCTAssertEqual(output, photo.pixels)
        XCTAssertThrowsError(try UnderEyeStage(context: context, settings: UnderEyeSettings(strength: 1.5)))
    }
}
