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

    /// The blend runs over the faces' reach only (`SkinFrame.changed`), the smoothing's margin
    /// left out, and the stages after it see only that region as changed. That is exact only
    /// if the mask is 0 wherever a frame pixel outside the region samples it: every mask texel
    /// with skin (r) or spot permission (b) must be sampled by pixels inside the region alone.
    func testTheMaskIsZeroWhereTheBlendDoesNotRun() throws {
        for name in ["grace_hopper", "astronaut"] {
            let fixture = try FaceFixture.load(name)
            var settings = BeautySettings.standard
            settings.strength = 1
            let run = try PipelineRunner.run(context: context, rgba: fixture.rgba, width: fixture.width, height: fixture.height,
                                             faces: fixture.faces, personMask: fixture.personMask, settings: settings)
            let changed = run.changed, region = run.region
            XCTAssertFalse(changed.isEmpty, name)
            XCTAssertEqual(changed.union(region), region, "\(name): the changed part lies inside the stages' region")
            XCTAssertLessThan(changed.width * changed.height, region.width * region.height, "\(name): the margin is left out")
            let scale = SIMD2(Float(fixture.width) / Float(run.maskWidth), Float(fixture.height) / Float(run.maskHeight))
            var reached = 0
            for y in 0..<run.maskHeight {
                for x in 0..<run.maskWidth {
                    let texel = run.mask[y * run.maskWidth + x]
                    guard texel.x > 0 || texel.z > 0 else { continue }
                    reached += 1
                    // Frame pixels p whose centre p + 0.5 lies within one texel of the texel's centre sample it.
                    let centre = (SIMD2(Float(x), Float(y)) + 0.5) * scale
                    let low = (centre - scale - 0.5).rounded(.down) + 1, high = (centre + scale - 0.5).rounded(.up) - 1
                    let first = SIMD2(max(0, Int(low.x)), max(0, Int(low.y)))
                    let last = SIMD2(min(fixture.width - 1, Int(high.x)), min(fixture.height - 1, Int(high.y)))
                    XCTAssertTrue(changed.contains(x: first.x, y: first.y) && changed.contains(x: last.x, y: last.y),
                                  "\(name): mask texel (\(x), \(y)) = \(texel) is sampled outside \(changed)")
                }
            }
            XCTAssertGreaterThan(reached, 100, name)
        }
    }
}
