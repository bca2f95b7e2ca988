import Foundation
import VelvetGPU
import VelvetTestSupport
import XCTest
@testable import VelvetBeauty

/// The skin stage with its fronts recorded two frames ahead of the blends (as a render that
/// looks ahead records them, `SkinStage.recordFront`): on a noisy clip whose skin changes at
/// one frame the blend weights move before the change (the strength fit's gains averaged
/// without lag, `GainWindow`), where the causal average does not; a still clip renders every
/// frame the same either way (a repeated frame keeps its average, so an unchanged face's
/// strength does not change).
final class SkinFrontAheadTests: GPUTestCase {
    private let frames = 10
    private let step = 6

    /// The astronaut, from frame `step` on with a faint pattern over the face (0.06 IOD
    /// across: the blotch band the strength fit measures), each frame with fresh noise.
    private func clip(fixture: FaceFixture) -> [[UInt8]] {
        let face = fixture.faces[0]
        let period = 0.06 * face.interOcularDistance
        var changed = fixture.rgba
        for y in 0..<fixture.height {
            for x in 0..<fixture.width {
                let lift = 12 * sin(2 * Float.pi * Float(x) / period) * sin(2 * Float.pi * Float(y) / period)
                for channel in 0..<3 {
                    let at = 4 * (y * fixture.width + x) + channel
                    changed[at] = UInt8(max(0, min(255, (Float(changed[at]) + lift).rounded())))
                }
            }
        }
        var noise = SeededGenerator(state: 17)
        return (0..<frames).map { noise.addingNoise(to: $0 < step ? fixture.rgba : changed, sigma: 0.5) }
    }

    /// Each frame's blend weights, with the fronts `lead` frames ahead (0: the causal way).
    private func weights(_ clip: [[UInt8]], fixture: FaceFixture, lead: Int) throws -> [[Float]] {
        let pipeline = try SkinPipeline(context: context)
        pipeline.capturesWeights = true
        // A strength whose target the astronaut's smoothing reaches with a gain under the cap,
        // so the gain follows the skin.
        var settings = try BeautyPreset.shippedDefault.skinSettings()
        settings.strength = 0.3
        let stage = try SkinStage(pipeline: pipeline, settings: settings)
        let chain = try BeautyChain(context: context, stages: [stage])
        let faces = [try BeautyFace(landmarks: fixture.faces[0].landmarks, track: 1)]
        let width = fixture.width, height = fixture.height
        let person = try GPUImage(context: context, width: fixture.personMask.width, height: fixture.personMask.height, format: .r32f)
        var images: [GPUImage] = []
        let upload = try CommandRecorder(context: context)
        try fixture.personMask.values.withUnsafeBytes { try upload.upload($0, to: person) }
        for frame in clip {
            let image = try GPUImage(context: context, width: width, height: height, format: .rgba8)
            try frame.withUnsafeBytes { try upload.upload($0, to: image) }
            images.append(image)
        }
        try upload.submit().wait()
        let output = try GPUImage(context: context, width: width, height: height, format: .rgba8)
        var fronts = 0
        var result: [[Float]] = []
        for index in clip.indices {
            let recorder = try CommandRecorder(context: context)
            if lead > 0 {
                while fronts < min(clip.count, index + lead + 1) {
                    try stage.recordFront(on: recorder, image: images[fronts], faces: faces, personMask: person, lead: lead)
                    fronts += 1
                }
            }
            let frame = StageFrame(input: images[index], faces: faces, personMask: person)
            _ = try chain.record(on: recorder, frame: frame, output: output)
            let readback = try recorder.download(try XCTUnwrap(frame.skin?.weights))
            try recorder.submit().wait()
            result.append(PipelineRunner.halves(readback.bytes))
        }
        return result
    }

    func testAChangeIsFollowedWithoutLag() throws {
        let fixture = try FaceFixture.load("astronaut")
        let clip = clip(fixture: fixture)
        let ahead = try weights(clip, fixture: fixture, lead: 2)
        let causal = try weights(clip, fixture: fixture, lead: 0)
        func mean(_ values: [Float]) -> Double { values.reduce(0) { $0 + Double($1) } / Double(values.count) }
        print("mean blend weight per frame, ahead:", ahead.map { String(format: "%.5f", mean($0)) }.joined(separator: " "))
        print("mean blend weight per frame, causal:", causal.map { String(format: "%.5f", mean($0)) }.joined(separator: " "))
        // How far each frame has moved from the level before the change towards the level
        // after it.
        func progress(_ run: [[Float]]) -> [Double] {
            let before = (0..<2).map { mean(run[$0]) }.reduce(0, +) / 2
            let after = mean(run[frames - 1])
            return run.map { (mean($0) - before) / (after - before) }
        }
        let aheadProgress = progress(ahead), causalProgress = progress(causal)
        print("progress ahead:", aheadProgress.map { String(format: "%.2f", $0) }.joined(separator: " "))
        print("progress causal:", causalProgress.map { String(format: "%.2f", $0) }.joined(separator: " "))
        XCTAssertGreaterThan(abs(mean(ahead[frames - 1]) / mean(ahead[0]) - 1), 0.01, "the change moves the weights")
        // Ahead: the average over frames n - 2 ... n + 2 holds (n - step + 3) / 5 of the
        // changed frames; causal: nothing before the change.
        for index in 0..<frames {
            let expected = min(1, max(0, Double(index - step + 3) / 5))
            XCTAssertEqual(aheadProgress[index], expected, accuracy: 0.1, "ahead, frame \(index)")
        }
        XCTAssertLessThan(abs(causalProgress[step - 1]), 0.15, "causal: not yet moved one frame before the change")
        XCTAssertGreaterThan(causalProgress[step + 1] - causalProgress[step], 0.15, "causal: still moving one frame after it")
    }

    /// A still clip: every frame's blend is the one before's, ahead or not.
    func testAStillClipRendersEveryFrameTheSame() throws {
        let fixture = try FaceFixture.load("astronaut")
        let still = [[UInt8]](repeating: fixture.rgba, count: 5)
        for lead in [0, 2] {
            let weights = try weights(still, fixture: fixture, lead: lead)
            // Frame 1 on: the first frame's spot fills are its own, later ones remembered.
            for index in 2..<weights.count {
                let differing = zip(weights[index], weights[1]).filter { $0 != $1 }
                XCTAssertTrue(differing.isEmpty, "lead \(lead), frame \(index): \(differing.count) weights differ, e.g. \(differing.prefix(3))")
            }
        }
    }
}
