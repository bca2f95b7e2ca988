import Foundation
import VelvetFace
import VelvetGPU
import VelvetTestSupport
import XCTest

/// The tracker on still photos against MediaPipe 0.10.21's own Python solutions (M1, M2).
final class StillImageTests: GPUTestCase {
    static let photos = ["astronaut", "grace_hopper"]

    func testDetectionBoxesMatchMediaPipeForBothDetectors() throws {
        for name in Self.photos {
            let fixture = try MediaPipeFixture(name)
            let image = try FaceTestSupport.photo(name, context: context)
            for (key, model) in [("short", FaceDetectorModel.shortRange), ("full", .fullRange)] {
                let detector = try FaceDetector(context: context, model: model, files: FaceTestSupport.models)
                let found = try detector.detect(image)
                let expected = try XCTUnwrap(fixture.detections[key])
                XCTAssertEqual(found.count, expected.count, "\(name) \(key): detections")
                for (ours, theirs) in zip(found, expected) {
                    let box = [ours.box.x, ours.box.y, ours.box.width, ours.box.height]
                    let boxError = zip(box, theirs.box).map { abs($0 - $1) }.max() ?? .infinity
                    let keypointError = zip(ours.keypoints, theirs.keypoints)
                        .map { FaceTestSupport.distance($0, SIMD2($1[0], $1[1])) }.max() ?? .infinity
                    print("detector \(key) \(name): box error \(boxError) px, keypoint error \(keypointError) px, score \(ours.score) vs \(theirs.score)")
                    XCTAssertLessThanOrEqual(boxError, 1, "\(name) \(key): box \(box) vs \(theirs.box)")
                    XCTAssertLessThanOrEqual(keypointError, 1, "\(name) \(key): keypoints")
                    XCTAssertEqual(ours.score, theirs.score, accuracy: 0.01, "\(name) \(key): score")
                }
            }
        }
    }

    /// M1 (mean landmark error <= 0.2 % of IOD) and M2 (mask IoU >= 0.99) in one tracker pass.
    func testStillMeshAndMaskMatchMediaPipe() throws {
        let tracker = try FaceTracker(context: context, options: .still, files: FaceTestSupport.models)
        for name in Self.photos {
            let fixture = try MediaPipeFixture(name)
            let image = try FaceTestSupport.photo(name, context: context)
            let result = try tracker.process(image)
            XCTAssertEqual(result.faces.count, fixture.landmarks.count, "\(name): faces")
            let reference = try XCTUnwrap(fixture.landmarks.first)
            let face = try XCTUnwrap(result.faces.first)
            let m1 = FaceTestSupport.meanError(face.points, reference: reference)
            print("M1 \(name): mean landmark error \(m1 * 100) % IOD (IOD \(face.interOcularDistance) px, presence \(face.score))")
            XCTAssertLessThanOrEqual(m1, 0.002, "\(name): M1")

            // M2 is at frame size, where MediaPipe's mask is: the model-sized mask resized as its readers sample it.
            let mask = try GPUImage(context: context, width: fixture.width, height: fixture.height, format: .r16f)
            let resize = try CommandRecorder(context: context)
            try tracker.recordPersonMaskResize(try XCTUnwrap(result.personMask), into: mask, on: resize)
            try resize.submit().wait()
            let ours = try FaceTestSupport.channel(mask).map { $0 > 0.5 }
            let intersection = zip(ours, fixture.personMask).filter { $0 && $1 }.count
            let union = zip(ours, fixture.personMask).filter { $0 || $1 }.count
            let iou = Float(intersection) / Float(max(union, 1))
            print("M2 \(name): mask IoU \(iou) (\(union) px in the union)")
            XCTAssertGreaterThan(union, fixture.width * fixture.height / 10, "\(name): the person covers the frame")
            XCTAssertGreaterThanOrEqual(iou, 0.99, "\(name): M2")
        }
    }

    func testBackgroundCropHasNoFace() throws {
        // The astronaut photo's top-right corner: flag and sky, no face.
        let photo = try FaceTestSupport.rawPhoto("astronaut")
        let (x0, y0, size) = (352, 0, 160)
        var crop = [UInt8]()
        for y in y0..<(y0 + size) {
            let start = (y * photo.width + x0) * 4
            crop += photo.pixels[start..<(start + size * 4)]
        }
        let image = try FaceTestSupport.image(crop, width: size, height: size, context: context)
        for model in FaceDetectorModel.allCases {
            let detector = try FaceDetector(context: context, model: model, files: FaceTestSupport.models)
            XCTAssertEqual(try detector.detect(image).count, 0, "\(model) detector on the background crop")
        }
        let tracker = try FaceTracker(context: context, options: .video, files: FaceTestSupport.models)
        for _ in 0..<2 {
            let result = try tracker.process(image)
            XCTAssertTrue(result.faces.isEmpty)
            XCTAssertTrue(result.ranDetection, "with no face tracked the detector runs every frame")
        }
    }
}
