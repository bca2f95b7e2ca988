import Foundation
import VelvetBeauty
import VelvetGPU
import VelvetMedia
import VelvetPipeline
import VelvetTestSupport
import XCTest

/// A render in its steady state creates no Vulkan objects per frame: images, pipelines and
/// command slots are made on the first frames and reused, and the buffers stages fill every
/// frame (face geometry, makeup and reshape fields, strength-fit gains) come from the
/// context's buffer pool. A per-frame object grew the validation layer's bookkeeping over
/// the soak and costs a driver call each frame.
final class SteadyRenderTests: GPUTestCase {
    /// Notes how many Vulkan objects the context had made when each frame began.
    private final class ObjectCounter: FrameEffect, @unchecked Sendable {
        let inner: BeautyEffect
        private(set) var atFrameStart: [Int] = []
        init(_ inner: BeautyEffect) { self.inner = inner }
        var minimumFrameSide: Int { inner.minimumFrameSide }
        var workingBytesPerPixel: Int { inner.workingBytesPerPixel }
        var lookAheadBytesPerPixel: Int { inner.lookAheadBytesPerPixel }
        var lookAhead: Int { inner.lookAhead }
        var framesInFlight: Int { inner.framesInFlight }
        func look(ahead frame: EffectFrame) throws { try inner.look(ahead: frame) }
        func completed(frame index: Int) throws { try inner.completed(frame: index) }
        func record(_ frame: EffectFrame, on recorder: CommandRecorder) throws -> FrameChange {
            atFrameStart.append(inner.context.vulkanObjectsCreated)
            return try inner.record(frame, on: recorder)
        }
    }

    func testASteadyRenderCreatesNoVulkanObjectsPerFrame() throws {
        // A slow pan: the detector runs again at frames 10, 20 and 30.
        let counts = try objectCounts { index in SimilarityTransform(scale: 0.5, translation: (Double(index), 0)) }
        // The look-ahead runs K + 2 frames ahead of the frame recorded, on its own thread: around
        // a detection pass the two threads take pool buffers at once, and the pool grows to
        // their joint peak by an amount and at a frame that depend on their timing (the first
        // pass meets the first frames' recording, the second the steady state, with up to 6
        // objects around frame 12). The last `frontLead` frames record no fronts ahead and
        // average their gains over fewer frames, in buffers of other sizes (3 objects each
        // when the pool has not met those sizes before). So the check is that nothing is made
        // per frame from the second pass on: frames 20 to 33, with the third pass, at most 4
        // objects in all.
        let first = 20, last = Self.frames - BeautyEffect.frontLead
        XCTAssertLessThanOrEqual(counts[last] - counts[first], 4, "frames \(first)..<\(last) created Vulkan objects: \(counts)")
    }

    /// A face that grows every frame (walking towards the camera, 1 % a frame) outgrows the
    /// stages' region-sized images (spot removal's luma, the bilateral grid) now and then, not
    /// every frame: each new image costs a submission and a wait for the queue.
    func testAGrowingFaceReallocatesNowAndThenNotEveryFrame() throws {
        let counts = try objectCounts { index in SimilarityTransform(scale: 0.5 * (1 + 0.01 * Double(index)), translation: (0, 0)) }
        // As above, plus at most one new image of each grown kind (4) in the window, where the
        // face grows 11 %.
        let first = 20, last = Self.frames - BeautyEffect.frontLead
        XCTAssertLessThanOrEqual(counts[last] - counts[first], 8, "frames \(first)..<\(last) created Vulkan objects: \(counts)")
    }

    private static let frames = 36

    /// The Vulkan objects made by the start of each frame of a default render of the test photo
    /// moved by `transform`, then by its end.
    private func objectCounts(_ transform: @escaping (Int) -> SimilarityTransform) throws -> [Int] {
        let context = try self.context
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let scratch = try Scratch()
        let clip = scratch.path("clip.mp4")
        let photo = try ImageLoader.load(repository.appendingPathComponent("test-assets/grace_hopper.jpg").path, context: context)
        let frames = Self.frames
        try ClipSynthesizer(context: context).write(photo: photo, to: clip, width: 256, height: 256, frames: frames, transform: transform)
        let options = try BeautyOptions(preset: .natural) { try LUTLoader.load($0, context: context) }
        let counter = ObjectCounter(try BeautyEffect(context: context, options: options))
        var settings = EncoderSettings()
        settings.preset = "ultrafast"
        let summary = try VideoRenderer(context: context).render(input: clip, output: scratch.path("out.mp4"), settings: settings,
                                                                 effect: counter)
        XCTAssertEqual(summary.frames, frames)
        XCTAssertEqual(counter.inner.facesPerFrame, Array(repeating: 1, count: frames), "a face in every frame, so every stage runs")
        let counts = counter.atFrameStart + [context.vulkanObjectsCreated]
        print("[objects] Vulkan objects created by the start of each frame: \(counts)")
        return counts
    }
}
