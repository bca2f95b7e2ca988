import Foundation
@testable import VelvetBeauty
import VelvetGPU
import VelvetTestSupport
import XCTest

/// The blend's two ways (`SkinBlend`): one dispatch over the whole frame that copies the pixels
/// outside the region (GPUs), or the frame copied first and the kernel over the region only
/// (CPU devices). They must give the same bytes, output and weights, whichever the device.
final class SkinBlendTests: GPUTestCase {
    func testBothWaysOfTheBlendGiveTheSameBytes() throws {
        let fixture = try FaceFixture.load("grace_hopper")
        var settings = BeautySettings.standard
        settings.strength = 1
        var runs: [PipelineRun] = []
        for copiesOutside in [true, false] {
            let pipeline = try SkinPipeline(context: context, blendCopiesOutside: copiesOutside)
            runs.append(try PipelineRunner.run(context: context, pipeline: pipeline, rgba: fixture.rgba, width: fixture.width,
                                               height: fixture.height, faces: fixture.faces, personMask: fixture.personMask,
                                               settings: settings))
        }
        XCTAssertNotEqual(runs[0].output, fixture.rgba, "the blend changed the face")
        XCTAssertTrue(runs[0].output == runs[1].output, "output bytes differ between the two ways")
        XCTAssertTrue(runs[0].weights == runs[1].weights, "weights differ between the two ways")
        XCTAssertTrue(runs[0].weights.contains(0) && runs[0].weights.contains { $0 > 0 }, "weights inside and outside the region")
    }
}
