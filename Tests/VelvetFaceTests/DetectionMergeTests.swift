import Foundation
@testable import VelvetFace
import VelvetGPU
import VelvetMedia
import VelvetTestSupport
import XCTest

/// The detection pass's decoding and NMS on the GPU (`DetectionMerge`) against the CPU
/// reference (`DetectionDecoder` + `DetectionCandidate.suppress`, MediaPipe's decoding).
final class DetectionMergeTests: GPUTestCase {
    /// Crafted candidates: clusters of overlapping boxes, exact score ties at different
    /// places, empty boxes and their exact copies, lone boxes.
    func testSuppressionMatchesReferenceOnCraftedCandidates() throws {
        var random = SeededGenerator(state: 15)
        var candidates: [DetectionCandidate] = []
        for cluster in 0..<40 {
            let centre = SIMD2(Float(random.unit() * 1800), Float(random.unit() * 1000))
            let side = Float(20 + random.unit() * 200)
            for _ in 0..<(1 + cluster % 12) {
                let jitter = SIMD2(Float(random.unit() - 0.5), Float(random.unit() - 0.5)) * side * 0.6
                let size = side * Float(0.7 + random.unit() * 0.6)
                let low = centre + jitter - size / 2
                let keypoints = (0..<6).map { _ in low + SIMD2(Float(random.unit()), Float(random.unit())) * size }
                // Scores on a coarse grid, so exact ties happen.
                candidates.append(DetectionCandidate(score: 0.5 + Float(Int(random.unit() * 20)) / 40, low: low,
                                                     high: low + size, keypoints: keypoints))
            }
        }
        let empty = DetectionCandidate(score: 0.9, low: SIMD2(5, 5), high: SIMD2(5, 9), keypoints: Array(repeating: SIMD2(5, 7), count: 6))
        candidates += [empty, empty, DetectionCandidate(score: 0.7, low: SIMD2(5, 5), high: SIMD2(5, 9), keypoints: empty.keypoints)]
        candidates.shuffle(using: &random)

        let merge = try DetectionMerge(context: context)
        let expected = DetectionCandidate.suppress(candidates)
        XCTAssertGreaterThan(expected.count, 30, "the crafted set must leave many detections")
        XCTAssertLessThan(expected.count, candidates.count / 2, "and merge many candidates")
        try assertSame(try merge.suppress(candidates), expected, "crafted")
        XCTAssertEqual(try merge.suppress([]).count, 0)
    }

    /// Every view a still's full search runs (the whole frame, the tiles, the quarter turns),
    /// both models, on two group photos: the GPU pass gives the CPU reference's
    /// detections.
    func testGPUPassMatchesReferenceOverTilesAndTurns() throws {
        let photos = [try FaceTestSupport.asset("photos/mexico.webp", fetchedBy: "Tools/fetch-test-photos.sh"),
                      try FaceTestSupport.asset("photos/ireland.webp", fetchedBy: "Tools/fetch-test-photos.sh")]
        var compared = 0
        for path in photos {
            let image = try ImageLoader.load(path, context: context)
            let views = (0..<4).map { DetectionView.letterbox(width: image.width, height: image.height, quarterTurns: $0) }
                + DetectionPolicy().tiles(width: image.width, height: image.height)
            for model in FaceDetectorModel.allCases {
                let detector = try FaceDetector(context: context, model: model, files: FaceTestSupport.models)
                let recorder = try CommandRecorder(context: context)
                let raw = try views.map { try detector.record(on: recorder, image: image, view: $0) }
                try recorder.submit().wait()
                let expected = DetectionCandidate.suppress(raw.flatMap(detector.candidates))
                let label = "\((path as NSString).lastPathComponent) \(model) over \(views.count) views"
                compared += expected.count
                try assertSame(try detector.detect(image, views: views), expected, label)
            }
        }
        XCTAssertGreaterThanOrEqual(compared, 10, "detections compared")
    }

    private func assertSame(_ found: [FaceDetection], _ expected: [FaceDetection], _ label: String,
                            file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(found.count, expected.count, "\(label): detections", file: file, line: line)
        var worst: Float = 0
        for (ours, theirs) in zip(found, expected) {
            XCTAssertEqual(ours.score, theirs.score, accuracy: 1e-5, "\(label): score", file: file, line: line)
            let box = [ours.box.x - theirs.box.x, ours.box.y - theirs.box.y, ours.box.width - theirs.box.width,
                       ours.box.height - theirs.box.height].map(abs).max()!
            let keypoints = zip(ours.keypoints, theirs.keypoints).map { FaceTestSupport.distance($0, $1) }.max() ?? 0
            worst = max(worst, box, keypoints)
        }
        print("detection merge \(label): \(found.count) detections, largest difference \(worst) px")
        XCTAssertLessThanOrEqual(worst, 0.01, "\(label): boxes and keypoints", file: file, line: line)
    }
}

