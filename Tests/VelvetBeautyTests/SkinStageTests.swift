import Foundation
import VelvetBeauty
import VelvetFace
import VelvetGPU
import VelvetTestSupport
import XCTest

/// Mask, zones, several faces and spot removal, checked at known places of a real face.
final class SkinStageTests: GPUTestCase {
    private func maskValue(_ run: PipelineRun, at point: SIMD2<Float>, width: Int, height: Int) -> SIMD4<Float> {
        let x = min(run.maskWidth - 1, Int(point.x * Float(run.maskWidth) / Float(width)))
        let y = min(run.maskHeight - 1, Int(point.y * Float(run.maskHeight) / Float(height)))
        return run.mask[y * run.maskWidth + x]
    }

    private func centroid(_ face: BeautyFace, _ region: MeshRegion) -> SIMD2<Float> {
        face.polygon(region).reduce(.zero, +) / Float(region.indices.count)
    }

    func testMaskHolesAndZonesOnAstronaut() throws {
        let fixture = try FaceFixture.load("astronaut")
        let run = try PipelineRunner.run(context: context, rgba: fixture.rgba, width: fixture.width, height: fixture.height,
                                         faces: fixture.faces, personMask: fixture.personMask, settings: .standard)
        let face = fixture.faces[0]
        func at(_ point: SIMD2<Float>) -> SIMD4<Float> { maskValue(run, at: point, width: fixture.width, height: fixture.height) }
        // Skin: cheeks full, features are holes, the far background is untouched.
        XCTAssertGreaterThan(at(face.landmarks[MeshRegion.cheekCentres.right]).x, 0.9)
        XCTAssertGreaterThan(at(face.landmarks[MeshRegion.cheekCentres.left]).x, 0.9)
        for region in [MeshRegion.rightEye, .leftEye, .lipsOuter] {
            XCTAssertEqual(at(centroid(face, region)).x, 0, "\(region) must be a hole")
        }
        // Brows arch, so their vertex centroid can fall outside: take upper/lower mid points.
        for (upper, lower) in [(105, 52), (334, 282)] {
            XCTAssertEqual(at((face.landmarks[upper] + face.landmarks[lower]) / 2).x, 0, "brow \(upper) must be a hole")
        }
        XCTAssertEqual(at(SIMD2(5, 500)).x, 0)
        XCTAssertEqual(at(face.centre + SIMD2(0.6 * face.faceSize, 0)).x, 0, "beyond the outer radius")
        // Zones (g): forehead and cheeks 1, nose 0.5, under-eye 0.6, chin 0.8.
        XCTAssertEqual(at(face.landmarks[MeshRegion.foreheadCentre]).y, 1, accuracy: 0.02)
        XCTAssertEqual(at(face.landmarks[MeshRegion.cheekCentres.right]).y, 1, accuracy: 0.02)
        XCTAssertEqual(at(face.landmarks[195]).y, 0.5, accuracy: 0.05, "nose bridge")
        XCTAssertEqual(at((face.landmarks[18] + face.landmarks[152]) / 2).y, 0.8, accuracy: 0.05, "chin")
        XCTAssertEqual(at(face.landmarks[230]).y, 0.6, accuracy: 0.1, "under the right eye")
        // Spot permission (b): cheek yes, nose and lips no, outside the oval no.
        XCTAssertGreaterThan(at(face.landmarks[MeshRegion.cheekCentres.right]).z, 0.9)
        XCTAssertEqual(at(face.landmarks[4]).z, 0, "nose tip")
        XCTAssertEqual(at(centroid(face, .lipsOuter)).z, 0)
        XCTAssertEqual(at(SIMD2(5, 500)).z, 0)
    }

    /// A face's weight scales what the skin stages do to it (a lost face the tracker holds
    /// fades out): half the weight, about half the change; weight 0, the input exactly.
    func testAFaceWeightFadesTheEffect() throws {
        let fixture = try FaceFixture.load("astronaut")
        let face = fixture.faces[0]
        var changes: [Float: (mean: Double, max: Int)] = [:]
        for weight: Float in [1, 0.5, 0] {
            let run = try PipelineRunner.run(context: context, rgba: fixture.rgba, width: fixture.width, height: fixture.height,
                                             faces: [try BeautyFace(landmarks: face.landmarks, weight: weight)],
                                             personMask: fixture.personMask, settings: BeautyPreset.shippedDefault.skinSettings())
            var total = 0, worst = 0
            for i in 0..<(fixture.width * fixture.height) where i % 4 != 3 {
                let d = abs(Int(run.output[i]) - Int(fixture.rgba[i]))
                total += d
                worst = max(worst, d)
            }
            changes[weight] = (Double(total), worst)
        }
        let full = try XCTUnwrap(changes[1]), half = try XCTUnwrap(changes[0.5]), none = try XCTUnwrap(changes[0])
        print("face weight: total change 1 -> \(full.mean), 0.5 -> \(half.mean), 0 -> \(none.mean) (max \(none.max))")
        XCTAssertGreaterThan(full.mean, 0)
        XCTAssertEqual(half.mean / full.mean, 0.5, accuracy: 0.1)
        XCTAssertEqual(none.max, 0, "weight 0: the input exactly")
    }

    /// Two faces in one frame: both get a mask (union), each with its own holes; a person
    /// mask of zero removes the skin mask entirely.
    func testSeveralFacesUnionAndPersonMask() throws {
        let fixture = try FaceFixture.load("astronaut")
        let width = 1024, height = 512
        // The photo twice side by side, with the face geometry moved along.
        var canvas = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for copy in 0..<2 {
                let source = y * fixture.width * 4, target = (y * width + copy * fixture.width) * 4
                canvas.replaceSubrange(target..<(target + fixture.width * 4), with: fixture.rgba[source..<(source + fixture.width * 4)])
            }
        }
        let faces = [fixture.faces[0], try fixture.faces[0].transformed(scale: 1, offset: SIMD2(Float(fixture.width), 0))]
        let run = try PipelineRunner.run(context: context, rgba: canvas, width: width, height: height, faces: faces,
                                         personMask: nil, settings: .standard)
        for face in faces {
            let cheek = maskValue(run, at: face.landmarks[MeshRegion.cheekCentres.left], width: width, height: height)
            XCTAssertGreaterThan(cheek.x, 0.9)
            XCTAssertEqual(maskValue(run, at: centroid(face, .rightEye), width: width, height: height).x, 0)
        }
        XCTAssertEqual(QualityMetrics.maxAbsDifference(canvas, run.output, weights: run.weights), 0, "M3 with two faces")
        XCTAssertNotEqual(canvas, run.output)

        // A person mask that sees nobody (segmentation misses small and distant people) leaves
        // the skin inside the mesh's own oval, and nothing outside it.
        let nobody = PlaneImage(width: 4, height: 4, values: .init(repeating: 0, count: 16))
        var smoothingOnly = BeautySettings.standard
        smoothingOnly.spotRemoval = 0
        let face = fixture.faces[0]
        let missed = try PipelineRunner.run(context: context, rgba: fixture.rgba, width: fixture.width, height: fixture.height,
                                            faces: fixture.faces, personMask: nobody, settings: smoothingOnly)
        XCTAssertGreaterThan(maskValue(missed, at: face.landmarks[MeshRegion.cheekCentres.left], width: fixture.width,
                                       height: fixture.height).x, 0.5, "the cheek is skin all the same")
        let oval = face.polygon(.faceOval)
        var outside = 0
        for y in 0..<fixture.height {
            for x in 0..<fixture.width where missed.weights[y * fixture.width + x] > 0 {
                if RegionMask.signedDistance(SIMD2(Float(x) + 0.5, Float(y) + 0.5), oval) > 1 { outside += 1 }
            }
        }
        XCTAssertEqual(outside, 0, "no weight outside the oval when the person mask sees nobody")
    }

    /// Dark dots painted on the cheek and the chin are filled; one on the lips stays exactly as painted.
    func testSpotRemovalFillsSkinSpotsAndSparesFeatures() throws {
        let fixture = try FaceFixture.load("astronaut")
        let face = fixture.faces[0]
        var painted = fixture.rgba
        let radius: Float = 1.6 // px: a ~3 px blemish on a 103 px face (fine scale 1 px, coarse ~2.4 px)
        func paint(_ centre: SIMD2<Float>) -> [Int] {
            var touched: [Int] = []
            for y in Int(centre.y - 4)...Int(centre.y + 4) {
                for x in Int(centre.x - 4)...Int(centre.x + 4) {
                    let d = SIMD2(Float(x) + 0.5, Float(y) + 0.5) - centre
                    guard (d * d).sum() <= radius * radius else { continue }
                    let i = (y * fixture.width + x) * 4
                    for c in 0..<3 { painted[i + c] = UInt8(Float(painted[i + c]) * 0.75) }
                    touched.append(y * fixture.width + x)
                }
            }
            return touched
        }
        let skinSpots = [face.landmarks[MeshRegion.cheekCentres.right] + SIMD2(0, 6), (face.landmarks[18] + face.landmarks[152]) / 2]
            .map(paint)
        let lipSpot = paint(centroid(face, .lipsOuter) + SIMD2(0, 4))
        let run = try PipelineRunner.run(context: context, rgba: painted, width: fixture.width, height: fixture.height,
                                         faces: fixture.faces, personMask: fixture.personMask, settings: .spotsAlone)
        let crop = PixelRegion(x: Int(face.ovalBounds.min.x), y: Int(face.centre.y - 10),
                               width: Int(face.faceSize), height: Int(face.faceSize * 0.4))
        let path = try ImageWriter.png(ImageWriter.sideBySide([painted, run.output], width: fixture.width, region: crop),
                                       width: crop.width * 2, height: crop.height, name: "spots-painted-removed", scale: 4)
        print("[crop] \(path)")
        func luma(_ bytes: [UInt8], _ pixels: [Int]) -> Float {
            pixels.map { i in 0.2126 * Float(bytes[4 * i]) + 0.7152 * Float(bytes[4 * i + 1]) + 0.0722 * Float(bytes[4 * i + 2]) }
                .reduce(0, +) / Float(pixels.count)
        }
        for (index, spot) in skinSpots.enumerated() {
            let darkness = luma(fixture.rgba, spot) - luma(painted, spot)
            let left = luma(fixture.rgba, spot) - luma(run.output, spot)
                        print(String(format: "[spots] skin spot %d: painted %.1f darker, %.1f left after removal", index, darkness, left))
            XCTAssertLessThan(left, 0.5 * darkness, "skin spot \(index) must be mostly filled")
        }
        for i in lipSpot {
            XCTAssertEqual(Array(run.output[(4 * i)..<(4 * i + 4)]), Array(painted[(4 * i)..<(4 * i + 4)]), "lip pixels stay")
        }
        XCTAssertEqual(QualityMetrics.maxAbsDifference(painted, run.output, weights: run.weights), 0, "M3 for spot removal")
    }

    /// A face painted with many spots, half dark and half faint: with the cap at the number
    /// of dark ones, at most that many are filled and a faint one is filled only when every
    /// dark one is; without the cap nearly all are filled.
    func testSpotCountIsCappedKeepingTheStrongest() throws {
        let fixture = try FaceFixture.load("grace_hopper")
        let face = fixture.faces[0]
        var settings = BeautySettings.spotsAlone
        settings.spotMaxCount = 1000
        let plain = try PipelineRunner.run(context: context, rgba: fixture.rgba, width: fixture.width, height: fixture.height,
                                           faces: fixture.faces, personMask: fixture.personMask, settings: settings)
        func permitted(_ point: SIMD2<Float>) -> Bool {
            [SIMD2<Float>(0, 0), SIMD2(7, 0), SIMD2(-7, 0), SIMD2(0, 7), SIMD2(0, -7)].allSatisfy {
                maskValue(plain, at: point + $0, width: fixture.width, height: fixture.height).z >= 0.99
            }
        }
        let spacing = max(14, face.faceSize * 0.07)
        var centres: [SIMD2<Float>] = []
        var y = face.ovalBounds.min.y
        while y < face.ovalBounds.max.y, centres.count < 16 {
            var x = face.ovalBounds.min.x
            while x < face.ovalBounds.max.x, centres.count < 16 {
                if permitted(SIMD2(x, y)) { centres.append(SIMD2(x, y)) }
                x += spacing
            }
            y += spacing
        }
        XCTAssertGreaterThanOrEqual(centres.count, 8, "room for the spots on the face")
        let radius = max(1.6, face.faceSize * 0.007)
        var painted = fixture.rgba
        let spots: [(pixels: [Int], dark: Bool)] = centres.enumerated().map { index, centre in
            let dark = index % 2 == 0
            var touched: [Int] = []
            let reach = Int(radius.rounded(.up)) + 1
            for py in Int(centre.y) - reach...Int(centre.y) + reach {
                for px in Int(centre.x) - reach...Int(centre.x) + reach {
                    let d = SIMD2(Float(px) + 0.5, Float(py) + 0.5) - centre
                    guard (d * d).sum() <= radius * radius else { continue }
                    let i = (py * fixture.width + px) * 4
                    for c in 0..<3 { painted[i + c] = UInt8(Float(painted[i + c]) * (dark ? 0.55 : 0.74)) }
                    touched.append(py * fixture.width + px)
                }
            }
            return (touched, dark)
        }
        func filled(_ output: [UInt8]) -> [Bool] {
            func luma(_ bytes: [UInt8], _ pixels: [Int]) -> Float {
                pixels.map { i in 0.2126 * Float(bytes[4 * i]) + 0.7152 * Float(bytes[4 * i + 1]) + 0.0722 * Float(bytes[4 * i + 2]) }
                    .reduce(0, +) / Float(pixels.count)
            }
            return spots.map { luma(output, $0.pixels) - luma(painted, $0.pixels) > 0.4 * (luma(fixture.rgba, $0.pixels) - luma(painted, $0.pixels)) }
        }
        let uncapped = try PipelineRunner.run(context: context, rgba: painted, width: fixture.width, height: fixture.height,
                                              faces: fixture.faces, personMask: fixture.personMask, settings: settings)
        let darkCount = spots.filter(\.dark).count
        settings.spotMaxCount = darkCount
        let capped = try PipelineRunner.run(context: context, rgba: painted, width: fixture.width, height: fixture.height,
                                            faces: fixture.faces, personMask: fixture.personMask, settings: settings)
        let all = filled(uncapped.output)
        let kept = filled(capped.output)
        for (index, spot) in spots.enumerated() {
            print("[spots] spot \(index) at \(centres[index]) \(spot.dark ? "dark" : "faint"): filled \(all[index]) uncapped, \(kept[index]) capped")
        }
        print("[spots] \(spots.count) painted; filled without cap \(all.filter { $0 }.count), with cap \(darkCount): \(kept.filter { $0 }.count)")
        XCTAssertGreaterThanOrEqual(all.filter { $0 }.count, spots.count - 2, "without a cap nearly every spot is filled")
        XCTAssertLessThanOrEqual(kept.filter { $0 }.count, darkCount, "the cap bounds the number filled")
        XCTAssertGreaterThan(kept.filter { $0 }.count, 0, "the strongest spots are still filled")
        let faintFilled = zip(spots, kept).contains { !$0.0.dark && $0.1 }
        let darkMissed = zip(spots, kept).contains { $0.0.dark && !$0.1 }
        XCTAssertFalse(faintFilled && darkMissed, "a faint spot was filled while a dark one was not")
        XCTAssertEqual(QualityMetrics.maxAbsDifference(painted, capped.output, weights: capped.weights), 0, "M3 with the cap")
    }
}

/// Settings, face geometry and mesh regions: pure CPU checks.
final class BeautySettingsAndRegionsTests: XCTestCase {
    func testSettingsValidation() throws {
        XCTAssertNoThrow(try BeautySettings.standard.validated())
        XCTAssertNoThrow(try BeautySettings.off.validated())
        var settings = BeautySettings.standard
        settings.strength = 1.5
        XCTAssertThrowsError(try settings.validated()) { error in
            XCTAssertEqual(error as? BeautyError, .invalidSettings("strength: 1.5 is out of range 0.0...1.0"))
        }
        settings = .standard
        settings.mask.innerRadius = 0.6
        XCTAssertThrowsError(try settings.validated())
        settings = .standard
        settings.zones.nose = .nan
        XCTAssertThrowsError(try settings.validated())
        XCTAssertEqual(BeautySettings.Smoothing(rawValue: "freqsep"), .frequencySeparation)
        XCTAssertEqual(BeautySettings.Smoothing(rawValue: "bilateral"), .bilateral)
    }

    func testFaceGeometryIsChecked() throws {
        XCTAssertThrowsError(try BeautyFace(landmarks: [SIMD2(0, 0)]))
        var points = try FaceFixture.loadGeometry("astronaut").faces[0].landmarks
        points[10] = SIMD2(.nan, 0)
        XCTAssertThrowsError(try BeautyFace(landmarks: points))
    }

    /// The regions sit where they belong on a real face (MediaPipe's mesh of both photos).
    func testRegionsOnRealFaces() throws {
        for region in MeshRegion.allCases {
            XCTAssertGreaterThanOrEqual(region.indices.count, 10, "\(region)")
            XCTAssertEqual(Set(region.indices).count, region.indices.count, "\(region) repeats a point")
            XCTAssertTrue(region.indices.allSatisfy { (0..<MeshRegion.meshPointCount).contains($0) })
        }
        for name in ["astronaut", "grace_hopper"] {
            let face = try FaceFixture.loadGeometry(name).faces[0]
            func centre(_ region: MeshRegion) -> SIMD2<Float> { face.polygon(region).reduce(.zero, +) / Float(region.indices.count) }
            func inside(_ point: SIMD2<Float>, _ region: MeshRegion) -> Bool { RegionMask.signedDistance(point, face.polygon(region)) < 0 }
            XCTAssertLessThan(centre(.rightEye).x, centre(.leftEye).x, "\(name): subject's right eye is on the image's left")
            XCTAssertLessThan(centre(.rightBrow).y, centre(.rightEye).y)
            XCTAssertLessThan(centre(.forehead).y, centre(.rightBrow).y)
            XCTAssertLessThan(centre(.nose).y, centre(.lipsOuter).y)
            XCTAssertLessThan(centre(.upperLip).y, centre(.lipsOuter).y)
            XCTAssertGreaterThan(centre(.chin).y, centre(.lipsOuter).y)
            XCTAssertGreaterThan(centre(.rightUnderEye).y, centre(.rightEye).y)
            XCTAssertTrue(inside(face.landmarks[MeshRegion.cheekCentres.right], .rightCheek), "\(name): point 50 in the right cheek")
            XCTAssertTrue(inside(face.landmarks[MeshRegion.cheekCentres.left], .leftCheek))
            XCTAssertTrue(inside(face.landmarks[MeshRegion.foreheadCentre], .forehead))
            XCTAssertTrue(inside(face.landmarks[4], .nose), "nose tip in the nose")
            XCTAssertTrue(inside(face.landmarks[13], .lipsOuter) && !inside(face.landmarks[13], .lipsInner) || inside(face.landmarks[13], .lipsOuter))
            for region in MeshRegion.allCases where region != .faceOval {
                XCTAssertTrue(inside(centre(region), .faceOval) || region == .nostrils, "\(name): \(region) inside the face oval")
            }
        }
    }
}
