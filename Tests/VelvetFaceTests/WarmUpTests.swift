import Foundation
@testable import VelvetFace
import VelvetGPU
import VelvetTestSupport
import XCTest

/// `FaceTracker.prepare` runs every model once on a GPU (`warmsUpGPU`) so the first frame does
/// not meet an idle GPU: what that inference leaves in the models' buffers must never reach a
/// frame's faces.
final class WarmUpTests: GPUTestCase {
    func testAWarmedUpTrackerFindsTheSameFaces() throws {
        let photo = try FaceTestSupport.photo("grace_hopper", context: context)
        var runs: [[[SIMD3<Float>]]] = []
        for warms in [false, true] {
            let tracker = try FaceTracker(context: context, options: .video, files: FaceTestSupport.models)
            tracker.warmsUpGPU = warms
            try tracker.prepare(width: photo.width, height: photo.height)
            // The mesh, both detectors (the full-range one once per view of a pass) and the segmentation.
            if warms { XCTAssertGreaterThanOrEqual(tracker.warmedUpPlans, 4) } else { XCTAssertEqual(tracker.warmedUpPlans, 0) }
            runs.append(try (0..<3).map { index in
                let faces = try tracker.process(photo, time: Double(index) / 30).faces
                XCTAssertEqual(faces.count, 1, "frame \(index), warm-up \(warms)")
                return faces.flatMap(\.landmarks)
            })
        }
        XCTAssertEqual(runs[0], runs[1], "the same landmarks with and without the warm-up")
    }
}
