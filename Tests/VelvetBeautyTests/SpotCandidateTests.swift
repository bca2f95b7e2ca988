import Foundation
import VelvetGPU
import VelvetTestSupport
import XCTest
@testable import VelvetBeauty

/// Spot removal runs its full test only on the pixels a cheaper candidate test lists
/// (`beauty_spots.comp`, PASS_CLASSIFY): a pixel left out must be one the full test would
/// leave unfilled. So the output must be the same bytes as with every permitted pixel
/// listed, on still faces and on a tracked face's frames under fresh noise (where remembered
/// fills are listed too), while the list is much shorter.
final class SpotCandidateTests: GPUTestCase {
    func testCandidatesLeaveOutNoFill() throws {
        var generator = SeededGenerator(state: 23)
        var cases: [(name: String, fixture: FaceFixture, frames: [[UInt8]], faces: [BeautyFace])] = []
        for name in ["grace_hopper", "astronaut"] {
            let fixture = try FaceFixture.load(name)
            cases.append((name, fixture, [fixture.rgba], fixture.faces))
            // A tracked face under fresh noise: later frames list remembered fills too.
            let tracked = try fixture.faces.map { try BeautyFace(landmarks: $0.landmarks, track: 4) }
            cases.append(("\(name), tracked under noise", fixture,
                          (0..<4).map { _ in generator.addingNoise(to: fixture.rgba, sigma: 5) }, tracked))
        }
        for (name, fixture, frames, faces) in cases {
            let every = try SkinPipeline(context: context, blendCopiesOutside: nil, classifiesEverySpotPixel: true)
            let listed = try SkinPipeline(context: context, blendCopiesOutside: nil)
            var filledPixels = 0
            for (index, frame) in frames.enumerated() {
                let runs = try [every, listed].map { pipeline in
                    let run = try PipelineRunner.run(context: context, pipeline: pipeline, rgba: frame, width: fixture.width,
                                                     height: fixture.height, faces: faces, personMask: fixture.personMask, settings: .spotsAlone)
                    return (output: run.output, candidates: try pipeline.spotCandidateCount())
                }
                filledPixels += zip(runs[1].output, frame).filter { $0 != $1 }.count
                let differing = zip(runs[0].output, runs[1].output).filter { $0 != $1 }.count
                XCTAssertEqual(differing, 0, "\(name), frame \(index): the same fills as with every pixel listed (bytes differing)")
                print("[spot-candidates] \(name), frame \(index): \(runs[1].candidates) of \(runs[0].candidates) permitted pixels listed")
                XCTAssertLessThan(runs[1].candidates, runs[0].candidates / 3, "\(name): the candidate test leaves most pixels out")
            }
            XCTAssertGreaterThan(filledPixels, 0, "\(name): spots were filled")
        }
    }
}

/// The candidate test's margin covers the device's filter precision.
final class SpotCandidateMarginTests: XCTestCase {
    func testTheMarginFollowsTheFiltersPrecision() {
        XCTAssertEqual(SpotRemoval.candidateMargin(subTexelPrecisionBits: 8), 1.0 / 128, "at least 1/128 (lavapipe, NVIDIA: 8 bits)")
        XCTAssertEqual(SpotRemoval.candidateMargin(subTexelPrecisionBits: 6), 1.0 / 32)
        XCTAssertEqual(SpotRemoval.candidateMargin(subTexelPrecisionBits: 4), 1.0 / 8, "Vulkan's least precision")
    }
}
