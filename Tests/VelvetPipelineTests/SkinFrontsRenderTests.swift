import Foundation
import VelvetGPU
import VelvetMedia
import VelvetPipeline
import VelvetTestSupport
import XCTest

/// A video render records the skin fronts two frames ahead of the blends, on the later
/// frames' working images (`EffectFrame.upcoming`): the look-ahead's own where it keeps them (a
/// CPU device), or converted early and then reused as the frame's own (a GPU's way). Both ways
/// give the same frames, with one and with two frames in flight.
final class SkinFrontsRenderTests: GPUTestCase {
    func testEarlyConvertedFramesRenderAsTheLookAheadsOwn() throws {
        let context = try self.context
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let scratch = try Scratch()
        let clip = scratch.path("clip.mkv")
        let photo = try ImageLoader.load(repository.appendingPathComponent("test-assets/grace_hopper.jpg").path, context: context)
        var lossless = EncoderSettings()
        lossless.crf = 0
        lossless.preset = "ultrafast"
        // A slow pan under fresh noise: every frame's faces, fronts and gains differ.
        try ClipSynthesizer(context: context).write(photo: photo, to: clip, width: 256, height: 256, frames: 12, noiseSigma: 2 / 255,
                                                    settings: lossless) { index in
            SimilarityTransform(scale: 0.5, translation: (Double(index), 0))
        }
        let options = try BeautyOptions(preset: .shippedDefault) { try LUTLoader.load($0, context: context) }
        var outputs: [String: String] = [:]
        for keepsImages in [true, false] {
            let effect = try BeautyEffect(context: context, options: options)
            let renderer = try VideoRenderer(context: context)
            renderer.keepsLookAheadImages = keepsImages
            let output = scratch.path("out-\(keepsImages).mkv")
            let summary = try renderer.render(input: clip, output: output, settings: lossless, effect: effect)
            XCTAssertEqual(summary.frames, 12)
            XCTAssertEqual(summary.lookAhead, options.lookAhead + BeautyEffect.frontLead)
            XCTAssertEqual(effect.facesPerFrame, Array(repeating: 1, count: 12))
            outputs["\(keepsImages)"] = try Tool.frameMD5s(output)
        }
        XCTAssertNotEqual(outputs["true"], try Tool.frameMD5s(clip), "the faces were treated")
        XCTAssertEqual(outputs["false"], outputs["true"], "converted early, the frames render as from the look-ahead's images")
    }
}
