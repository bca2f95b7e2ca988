import Foundation
@testable import VelvetBeauty
import VelvetGPU
import VelvetTestSupport
import XCTest

/// The per-pixel face kernels read their face table as texels on CPU devices and as a
/// storage buffer on GPUs (`FaceTable`); both ways are run here on one device and must give
/// the same bytes: the skin pipeline (mask and blend), makeup and reshape.
final class FaceTableTests: GPUTestCase {
    func testTexelAndStorageReadsGiveTheSameBytes() throws {
        let fixture = try FaceFixture.load("grace_hopper")
        var settings = BeautySettings.standard
        settings.strength = 1
        let skin = try [true, false].map { texels in
            try PipelineRunner.run(context: context, pipeline: try SkinPipeline(context: context, blendCopiesOutside: nil,
                                                                                faceTableTexels: texels),
                                   rgba: fixture.rgba, width: fixture.width, height: fixture.height, faces: fixture.faces,
                                   personMask: fixture.personMask, settings: settings)
        }
        XCTAssertNotEqual(skin[0].output, fixture.rgba, "the skin stages changed the face")
        XCTAssertEqual(skin[0].mask, skin[1].mask, "mask")
        XCTAssertTrue(skin[0].weights == skin[1].weights, "blend weights")
        XCTAssertEqual(skin[0].output, skin[1].output, "skin output")

        var makeup = MakeupSettings(lipstick: .init(strength: 0.8))
        makeup.blush.strength = 0.6
        var reshape = ReshapeSettings()
        reshape.eyes = 0.6
        reshape.slim = 0.6
        let painted = try [true, false].map { texels in
            let paint = try MakeupPaint(context: context, faceTableTexels: texels)
            return try StageRunner.run(context: context, rgba: fixture.rgba, width: fixture.width, height: fixture.height) {
                try paint.record(on: $0, image: $1, faces: fixture.faces, settings: makeup, destination: $2)
            }
        }
        let warped = try [true, false].map { texels in
            let warp = try ReshapeWarp(context: context, faceTableTexels: texels)
            return try StageRunner.run(context: context, rgba: fixture.rgba, width: fixture.width, height: fixture.height) {
                try warp.record(on: $0, image: $1, faces: fixture.faces, settings: reshape, destination: $2)
            }
        }
        for (name, runs) in [("makeup", painted), ("reshape", warped)] {
            XCTAssertNotEqual(runs[0].output, runs[0].input, "\(name) changed the face")
            XCTAssertEqual(runs[0].region, runs[1].region, name)
            XCTAssertEqual(runs[0].output, runs[1].output, name)
        }
    }
}
