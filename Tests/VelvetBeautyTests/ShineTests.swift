import Foundation
import VelvetBeauty
import VelvetFace
import VelvetGPU
import VelvetTestSupport
import XCTest

/// Shine control (`ShineStage`) on real photos, with the tracker's faces, through the chain:
/// where the skin shines (obama-podium's nose tip and cheek, biden's forehead and nose: by
/// at least 0.01) and where it shines a little (obama-room's nose) the forehead and nose
/// discs' 99th-percentile luma is lower, their fine band kept (energy ratio >= 0.6); a sepia
/// print with no specular highlight (dahlgren) stays nearly untouched; nothing outside the
/// feathered regions or inside the feature holes changes; strength 0 bit-exact.
final class ShineTests: GPUTestCase {
    private func stage(_ strength: Float) throws -> ShineStage {
        var preset = BeautyPreset.shippedDefault
        preset.shine.strength = strength
        return try ShineStage(context: context, settings: preset.shine)
    }

    func testHighlightsLowerTextureKeptNothingOutsideTheRegions() throws {
        let tracker = try FaceTracker(context: context, options: .still, files: TrackedPhoto.models)
        // The least each photo's p99 must fall by (nil: no shine, it must stay within 0.002).
        let photos: [(String, Double?)] = [("photos/obama-podium.jpg", 0.01), ("photos/biden.jpg", 0.01),
                                           ("photos/obama-room.jpg", 0), ("photos/dahlgren.jpg", nil)]
        for (name, fall) in photos {
            let photo = try TrackedPhoto.load(name, context: context, tracker: tracker)
            XCTAssertFalse(photo.faces.isEmpty, "\(name): a face")
            let (output, changed, _) = try photo.render([try stage(1)], context: context)
            XCTAssertNotNil(changed, "\(name): written")
            for (index, face) in photo.faces.enumerated() {
                let figures = try XCTUnwrap(QualityMetrics.shineReduction(input: photo.pixels, output: output, face: face),
                                            "\(name) face \(index): the shine metric")
                print("[shine] \(name) face \(index): p99 Y' \(figures.peakIn) -> \(figures.peakOut) over \(figures.pixels) px, "
                      + "fine band x\(figures.fineBand)")
                if let fall {
                    XCTAssertLessThan(figures.peakOut, figures.peakIn - fall, "\(name): highlights lower")
                } else {
                    XCTAssertLessThanOrEqual(abs(figures.peakOut - figures.peakIn), 0.002, "\(name): no shine, nearly untouched")
                }
                XCTAssertGreaterThanOrEqual(figures.fineBand, 0.6, "\(name): fine band kept")
                let geometry = ShineGeometry(faces: [face], width: output.width, height: output.height)
                try photo.picture(output, around: geometry.regions.flatMap(\.polygon),
                                  name: "shine-\(URL(fileURLWithPath: name).deletingPathExtension().lastPathComponent)-\(index)")
            }
            // Bit-exact beyond the regions' feather and inside the holes' outlines (half a pixel of slack).
            let regions = ShineGeometry(faces: photo.faces, width: output.width, height: output.height).regions
            var worst: Float = 0, moved = 0
            for y in 0..<output.height {
                for x in 0..<output.width {
                    let i = y * output.width + x
                    guard output.pixels[i] != photo.pixels.pixels[i] else { continue }
                    moved += 1
                    let p = SIMD2(Float(x) + 0.5, Float(y) + 0.5)
                    if regions.contains(where: { region in
                        RegionMask.signedDistance(p, region.polygon) < region.feather + 0.5
                            && region.holes.allSatisfy { RegionMask.signedDistance(p, $0) > -0.5 }
                    }) { continue }
                    let difference = output.pixels[i] - photo.pixels.pixels[i]
                    worst = max(worst, difference.max(), -difference.min())
                }
            }
            print("[shine] \(name): \(moved) px changed")
            XCTAssertEqual(worst, 0, "\(name): nothing changed outside the regions")
        }
    }

    func testZeroStrengthIsIdentity() throws {
        let tracker = try FaceTracker(context: context, options: .still, files: TrackedPhoto.models)
        let photo = try TrackedPhoto.load("photos/biden.jpg", context: context, tracker: tracker)
        let idle = try stage(0)
        XCTAssertTrue(idle.isIdle)
        let (output, changed, stages) = try photo.render([idle], context: context)
        XCTAssertEqual(stages, 0, "an idle stage is left out")
        XCTAssertNil(changed)
        XCTAssertEqual(output, photo.pixels)
        XCTAssertThrowsError(try ShineStage(context: context, settings: ShineSettings(strength: 1.5)))
    }
}
