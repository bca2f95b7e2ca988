import Foundation
import VelvetBeauty
import VelvetFace
import VelvetGPU
import VelvetTestSupport
import XCTest

/// Reshape: identity at 0, no folds at full strength, eye corners out and jaw in by amounts
/// that follow the strength, the GPU warp equals the documented field, nothing moves beyond
/// the documented reach.
final class ReshapeTests: GPUTestCase {
    private let full = ReshapeSettings(eyes: 1, slim: 1)

    /// Faces to check: both fixtures, plus one turned 25 degrees and shrunk (a head turn).
    private func testFaces() throws -> [BeautyFace] {
        let astronaut = try FaceFixture.loadGeometry("astronaut").faces[0]
        let grace = try FaceFixture.loadGeometry("grace_hopper").faces[0]
        let angle: Float = 25 * .pi / 180
        let (c, s) = (cos(angle), sin(angle))
        let turned = try BeautyFace(landmarks: grace.landmarks.map { p in
            let d = p - grace.centre
            return SIMD2(c * d.x - s * d.y, s * d.x + c * d.y) * 0.7 + SIMD2(260, 300)
        })
        return [astronaut, grace, turned]
    }

    func testBackwardMapNeverFoldsAtFullStrength() throws {
        for face in try testFaces() {
            let field = ReshapeField(faces: [face], settings: full)
            let region = field.region(width: 4096, height: 4096)
            XCTAssertFalse(region.isEmpty)
            // Jacobian of q(p) = p + d(p) by central differences on a pixel grid.
            let h: Float = 0.25
            var smallest = Float.infinity
            for y in stride(from: Float(region.y), to: Float(region.y + region.height), by: 1) {
                for x in stride(from: Float(region.x), to: Float(region.x + region.width), by: 1) {
                    let p = SIMD2(x, y)
                    let dx = (field.displacement(at: p + SIMD2(h, 0)) - field.displacement(at: p - SIMD2(h, 0))) / (2 * h)
                    let dy = (field.displacement(at: p + SIMD2(0, h)) - field.displacement(at: p - SIMD2(0, h))) / (2 * h)
                    smallest = min(smallest, (1 + dx.x) * (1 + dy.y) - dx.y * dy.x)
                }
            }
            XCTAssertGreaterThan(smallest, 0.2, "the warp folds (Jacobian determinant \(smallest))")
            print("reshape at full strength: smallest Jacobian determinant \(smallest)")
        }
    }

    func testEyeCornersMoveOutAndJawIn() throws {
        for face in try testFaces() {
            func movement(_ settings: ReshapeSettings, _ index: Int) -> SIMD2<Float> {
                let field = ReshapeField(faces: [face], settings: settings)
                return field.forward(face.landmarks[index]) - face.landmarks[index]
            }
            let eyes = ReshapeField(faces: [face], settings: ReshapeSettings(eyes: 1)).faces[0].eyes
            XCTAssertEqual(eyes.count, 2)
            // Outer and inner corners of both eyes move away from their eye's centre.
            for (corner, eye) in [(33, eyes[0]), (133, eyes[0]), (263, eyes[1]), (362, eyes[1])] {
                let outward = face.landmarks[corner] - eye.centre
                let r = outward.squareLength.squareRoot()
                let direction = outward / r
                let halfWay = (movement(ReshapeSettings(eyes: 0.5), corner) * direction).sum()
                let fullWay = (movement(ReshapeSettings(eyes: 1), corner) * direction).sum()
                // The magnifier alone moves radius r to r' with r' (1 - a (1 - r'^2/R^2)^2) = r.
                var moved = r
                for _ in 0..<50 {
                    let u = min(1, moved * moved / (eye.radius * eye.radius))
                    moved = r / (1 - ReshapeField.maxEyeAmount * (1 - u) * (1 - u))
                }
                let predicted = moved - r
                XCTAssertGreaterThan(predicted, 0.02 * r)
                XCTAssertGreaterThan(halfWay, 0, "corner \(corner) moves outward")
                XCTAssertEqual(fullWay, predicted, accuracy: 0.1 * predicted, "corner \(corner) by the magnifier's amount")
                XCTAssertEqual(halfWay / fullWay, 0.5, accuracy: 0.12, "corner \(corner) follows the strength")
            }
            // Mid-jaw anchors move toward the face centre by about maxSlim x face size x strength.
            for index in [172, 136, 397, 365] {
                let inward = face.centre - face.landmarks[index]
                let direction = inward / (inward * inward).sum().squareRoot()
                let expected = ReshapeField.maxSlim * face.faceSize
                let fullWay = (movement(ReshapeSettings(slim: 1), index) * direction).sum()
                let halfWay = (movement(ReshapeSettings(slim: 0.5), index) * direction).sum()
                XCTAssertEqual(fullWay, expected, accuracy: 0.3 * expected, "jaw point \(index) moves inward")
                XCTAssertEqual(halfWay / fullWay, 0.5, accuracy: 0.1, "jaw point \(index) follows the strength")
            }
            // The nose tip, far from every term, stays put.
            XCTAssertLessThan(movement(full, 4).squareLength, 1e-6)
        }
    }

    func testStrengthZeroAndNoFaceAreExactCopies() throws {
        let fixture = try FaceFixture.load("astronaut")
        let stage = try ReshapeWarp(context: context)
        for (faces, settings) in [(fixture.faces, ReshapeSettings.off), ([], full)] {
            let run = try StageRunner.run(context: context, rgba: fixture.rgba, width: fixture.width, height: fixture.height) {
                try stage.record(on: $0, image: $1, faces: faces, settings: settings, destination: $2)
            }
            XCTAssertTrue(run.region.isEmpty)
            XCTAssertEqual(run.output, run.input, "bit-exact copy")
        }
    }

    /// The kernel evaluates the same field: warping an image that holds each pixel's own
    /// coordinates gives back p + d(p) (bilinear sampling of a linear ramp is exact). The
    /// kernel sums per tile only the terms that reach it, in the field's order: one face, and
    /// two overlapping faces (the second turned and smaller, over the first's cheek).
    func testGPUWarpMatchesTheField() throws {
        let faces = try testFaces()
        try checkWarpMatchesTheField(faces: [faces[1]])
        try checkWarpMatchesTheField(faces: [faces[1], faces[2]])
    }

    private func checkWarpMatchesTheField(faces: [BeautyFace]) throws {
        let width = 512, height = 600
        var coordinates = [Float](repeating: 1, count: width * height * 4)
        for y in 0..<height { for x in 0..<width {
            coordinates[(y * width + x) * 4] = Float(x) + 0.5
            coordinates[(y * width + x) * 4 + 1] = Float(y) + 0.5
        } }
        let source = try GPUImage(context: context, width: width, height: height, format: .rgba32f)
        let destination = try GPUImage(context: context, width: width, height: height, format: .rgba32f)
        let recorder = try CommandRecorder(context: context)
        try coordinates.withUnsafeBytes { try recorder.upload($0, to: source) }
        let region = try ReshapeWarp(context: context).record(on: recorder, image: source, faces: faces, settings: full,
                                                               destination: destination)
        let readback = try recorder.download(destination)
        try recorder.submit().wait()
        let output = readback.bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let field = ReshapeField(faces: faces, settings: full)
        var worst: Float = 0
        for y in stride(from: region.y, to: region.y + region.height, by: 3) {
            for x in stride(from: region.x, to: region.x + region.width, by: 3) {
                let p = SIMD2(Float(x) + 0.5, Float(y) + 0.5)
                let expected = p + field.displacement(at: p)
                let got = SIMD2(output[(y * width + x) * 4], output[(y * width + x) * 4 + 1])
                worst = max(worst, (got - expected).squareLength.squareRoot())
            }
        }
        // Hardware bilinear weights carry 8 fractional bits: up to 1/256 px.
        XCTAssertLessThan(worst, 0.02, "GPU warp vs CPU field, pixels, \(faces.count) faces")
    }

    /// A face's weight (a held face fading out) scales its warp: half the displacement at 0.5,
    /// none at 0; the GPU warp of the half-weight face still matches the field.
    func testAFacesWeightScalesItsWarp() throws {
        let face = try testFaces()[1]
        let half = try BeautyFace(landmarks: face.landmarks, weight: 0.5)
        let gone = try BeautyFace(landmarks: face.landmarks, weight: 0)
        let whole = ReshapeField(faces: [face], settings: full), halved = ReshapeField(faces: [half], settings: full)
        var largest: Float = 0
        for point in [face.landmarks[172], face.landmarks[397], face.landmarks[159], face.landmarks[386]] {
            let d = whole.displacement(at: point), h = halved.displacement(at: point)
            largest = max(largest, d.squareLength.squareRoot())
            XCTAssertLessThan((h - 0.5 * d).squareLength.squareRoot(), 1e-4, "half the displacement at \(point)")
        }
        XCTAssertGreaterThan(largest, 1, "the points chosen move")
        XCTAssertTrue(ReshapeField(faces: [gone], settings: full).isIdentity, "a face of weight 0 is not warped")
        try checkWarpMatchesTheField(faces: [half])
    }

    /// Nothing farther than the documented reach (ReshapeField.slimRadius face sizes) outside
    /// the face oval changes; inside, the warp does change the face.
    func testPixelsBeyondTheReachNeverMove() throws {
        let fixture = try FaceFixture.load("grace_hopper")
        let face = fixture.faces[0]
        let stage = try ReshapeWarp(context: context)
        let run = try StageRunner.run(context: context, rgba: fixture.rgba, width: fixture.width, height: fixture.height) {
            try stage.record(on: $0, image: $1, faces: fixture.faces, settings: full, destination: $2)
        }
        let reach = ReshapeField.slimRadius * face.faceSize
        let oval = face.polygon(.faceOval)
        var changedInside = 0
        for y in 0..<fixture.height { for x in 0..<fixture.width {
            let index = (y * fixture.width + x) * 8 // rgba16f
            let same = run.output[index..<(index + 8)] == run.input[index..<(index + 8)]
            let p = SIMD2(Float(x) + 0.5, Float(y) + 0.5)
            if !same {
                let distance = RegionMask.signedDistance(p, oval)
                XCTAssertLessThanOrEqual(distance, reach, "pixel \(x),\(y) changed \(distance) px outside the oval")
                if distance > reach { return }
                changedInside += 1
            }
        } }
        XCTAssertGreaterThan(changedInside, 5000, "the warp changed the face")

        let crop = run.region
        let before = StageRunner.rgba8(run.input), after = StageRunner.rgba8(run.output)
        try StageRunner.png(ImageWriter.sideBySide([before, after], width: fixture.width, region: crop),
                            width: crop.width * 2, height: crop.height, name: "reshape_full_grace")
    }
}

extension SIMD2 where Scalar == Float {
    var squareLength: Float { (self * self).sum() }
}
