import Foundation
import VelvetBeauty
import VelvetFace
import VelvetGPU
import VelvetMedia
import VelvetPipeline
import VelvetTestSupport
import XCTest

/// M15 on renders of synthetic clips with known truth (a photo under a known motion, written
/// losslessly so a repeated frame decodes as an exact repeat), at the shipped default preset
/// and the default look-ahead.
final class TemporalStabilityRenderTests: GPUTestCase {
    /// Runs the beauty effect and feeds every frame's input, output and faces to M15, with
    /// the effect's frames in flight (each frame read back once it has completed).
    final class StabilityProbe: FrameEffect, @unchecked Sendable {
        let inner: BeautyEffect
        private(set) var stability = QualityMetrics.TemporalStability()
        private var pending: [(frame: Int, input: GPUReadback, output: GPUReadback?, width: Int, height: Int, faces: [BeautyFace])] = []
        init(_ inner: BeautyEffect) { self.inner = inner }
        var minimumFrameSide: Int { inner.minimumFrameSide }
        var workingBytesPerPixel: Int { inner.workingBytesPerPixel }
        var lookAheadBytesPerPixel: Int { inner.lookAheadBytesPerPixel }
        var lookAhead: Int { inner.lookAhead }
        var framesInFlight: Int { inner.framesInFlight }
        func look(ahead frame: EffectFrame) throws { try inner.look(ahead: frame) }

        func record(_ frame: EffectFrame, on recorder: CommandRecorder) throws -> FrameChange {
            let change = try inner.record(frame, on: recorder)
            let faces = try (inner.lastTracking?.faces ?? []).map { try BeautyFace(landmarks: $0.points) }
            // No change: the output is the input (the effect did not write it).
            pending.append((frame.index, try recorder.download(frame.input), change == .none ? nil : try recorder.download(frame.output),
                            frame.input.width, frame.input.height, faces))
            return change
        }

        func completed(frame index: Int) throws {
            try inner.completed(frame: index)
            while let first = pending.first, first.frame <= index {
                pending.removeFirst()
                let before = QualityMetrics.TemporalStability.levels(first.input, pixels: first.width * first.height)
                let after = first.output.map { QualityMetrics.TemporalStability.levels($0, pixels: first.width * first.height) } ?? before
                stability.add(input: before, output: after, width: first.width, height: first.height, faces: first.faces)
            }
        }
    }

    private func render(frames: Int, noiseSigma: Float = 0, transform: (Int) -> SimilarityTransform)
        throws -> (result: QualityMetrics.TemporalStability.Result, faces: [Int]) {
        let context = try self.context
        let scratch = try Scratch()
        let clip = scratch.path("clip.mkv")
        let photo = try ImageLoader.load(Self.asset("grace_hopper.jpg"), context: context)
        var lossless = EncoderSettings()
        lossless.crf = 0
        lossless.preset = "ultrafast"
        try ClipSynthesizer(context: context).write(photo: photo, to: clip, width: 256, height: 256, frames: frames,
                                                    noiseSigma: noiseSigma, settings: lossless, transform: transform)
        let options = try BeautyOptions(preset: .shippedDefault) { try LUTLoader.load($0, context: context) }
        let probe = StabilityProbe(try BeautyEffect(context: context, options: options))
        let summary = try VideoRenderer(context: context).render(input: clip, output: scratch.path("out.mkv"), settings: lossless,
                                                                 effect: probe)
        XCTAssertEqual(summary.frames, frames)
        XCTAssertEqual(summary.lookAhead, LookAheadTracker.standardFrames + BeautyEffect.frontLead,
                       "the default look-ahead of a video file, and the skin fronts' lead")
        return (probe.stability.result, probe.inner.facesPerFrame)
    }

    static func asset(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("test-assets/\(name)").path
    }

    /// A slow pan where every position is shown for two frames: each repeat renders as the
    /// frame before it, within 1 level (M15a), and every frame gets the effect (M15c).
    func testRepeatedFramesRenderTheSame() throws {
        let (result, faces) = try render(frames: 24) { index in
            SimilarityTransform(scale: 0.5, translation: (Double(index / 2) * 1.5, Double(index / 2) * 0.5))
        }
        print("M15 repeated frames: (a) \(result.largestChangeOnStill.map(String.init) ?? "none") levels over "
              + "\(result.stillFrames) repeats, (b) \(result.changeRatio ?? .nan), (c) \(result.framesWithoutBeauty)")
        XCTAssertEqual(faces, Array(repeating: 1, count: 24))
        XCTAssertEqual(result.stillFrames, 12, "every second frame repeats the one before")
        XCTAssertLessThanOrEqual(try XCTUnwrap(result.largestChangeOnStill), 1, "M15a")
        XCTAssertEqual(result.framesWithoutBeauty, 0, "M15c")
    }

    /// A still face under fresh noise: the render changes less from frame to frame than the
    /// source does (M15b ≤ 1), and no frame loses the effect.
    func testStaticNoisyClipIsNoJumpierThanItsSource() throws {
        let (result, faces) = try render(frames: 16, noiseSigma: 2 / 255) { _ in SimilarityTransform(scale: 0.5) }
        print("M15 static noisy clip: (b) \(result.changeRatio ?? .nan), (c) \(result.framesWithoutBeauty)")
        XCTAssertEqual(faces, Array(repeating: 1, count: 16))
        XCTAssertEqual(result.stillFrames, 0, "fresh noise: no frame repeats")
        XCTAssertLessThanOrEqual(try XCTUnwrap(result.changeRatio), 1, "M15b")
        XCTAssertEqual(result.framesWithoutBeauty, 0, "M15c")
    }
}
