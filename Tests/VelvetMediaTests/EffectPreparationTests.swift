import Foundation
import VelvetGPU
import VelvetMedia
import VelvetTestSupport
import XCTest

/// `FrameEffect.prepare(for:)`: called once per render, on a thread of its own, with what is
/// known of the input, and finished before the effect sees its first frame; an error fails
/// the render with that error and leaves no output.
final class EffectPreparationTests: GPUTestCase {
    private struct Failure: Error, Equatable {}

    /// Logs the calls in order, with their threads; optionally fails `prepare`.
    private final class Probe: FrameEffect, @unchecked Sendable {
        let lookAhead: Int
        let fails: Bool
        private let lock = NSLock()
        private var calls: [(name: String, thread: ObjectIdentifier)] = []
        private(set) var inputs: [EffectInput] = []

        init(lookAhead: Int, fails: Bool = false) { (self.lookAhead, self.fails) = (lookAhead, fails) }

        var log: [(name: String, thread: ObjectIdentifier)] { lock.withLock { calls } }

        private func note(_ name: String) { lock.withLock { calls.append((name, ObjectIdentifier(Thread.current))) } }

        func prepare(for input: EffectInput) throws {
            usleep(50_000) // models loading: the first frame must wait for it
            lock.withLock { inputs.append(input) }
            note("prepare")
            if fails { throw Failure() }
        }

        func look(ahead frame: EffectFrame) throws { note("look") }

        func record(_ frame: EffectFrame, on recorder: CommandRecorder) throws -> FrameChange {
            note("record")
            return .none
        }
    }

    private func clip(_ scratch: Scratch, name: String, size: String, frames: Int) throws -> String {
        let path = scratch.path(name)
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=\(size):rate=10", "-frames:v", "\(frames)", "-c:v", "ffv1", path])
        return path
    }

    func testPrepareComesFirstOnItsOwnThreadWithTheInput() throws {
        let scratch = try Scratch()
        let video = try clip(scratch, name: "clip.mkv", size: "96x64", frames: 6)
        for lookAhead in [0, 2] {
            let probe = Probe(lookAhead: lookAhead)
            _ = try VideoRenderer(context: context).render(input: video, output: scratch.path("out-\(lookAhead).mkv"),
                                                           settings: EncoderSettings(), effect: probe)
            let log = probe.log
            XCTAssertEqual(log.first?.name, "prepare")
            XCTAssertEqual(log.filter { $0.name == "prepare" }.count, 1, "once per render")
            XCTAssertEqual(log.filter { $0.name == "record" }.count, 6)
            XCTAssertEqual(log.filter { $0.name == "look" }.count, lookAhead > 0 ? 6 : 0)
            let prepareThread = log[0].thread
            XCTAssertFalse(log.dropFirst().contains { $0.thread == prepareThread }, "prepare runs on a thread of its own")
            XCTAssertEqual(probe.inputs, [EffectInput(isStillImage: false, looksAhead: lookAhead > 0, uprightSize: (96, 64))])
        }

        let photo = scratch.path("photo.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1", photo])
        let probe = Probe(lookAhead: 2)
        _ = try VideoRenderer(context: context).render(input: photo, output: scratch.path("out.png"), settings: EncoderSettings(),
                                                       effect: probe)
        XCTAssertEqual(probe.log.map(\.name), ["prepare", "record"])
        XCTAssertEqual(probe.inputs, [EffectInput(isStillImage: true, looksAhead: false, uprightSize: nil)])
    }

    func testAPrepareErrorFailsTheRenderAndLeavesNoOutput() throws {
        let scratch = try Scratch()
        let video = try clip(scratch, name: "clip.mkv", size: "96x64", frames: 6)
        let output = scratch.path("out.mkv")
        let probe = Probe(lookAhead: 2, fails: true)
        XCTAssertThrowsError(try VideoRenderer(context: context).render(input: video, output: output, settings: EncoderSettings(),
                                                                        effect: probe)) { error in
            XCTAssertEqual(error as? Failure, Failure())
        }
        XCTAssertEqual(probe.log.map(\.name), ["prepare"], "no frame reaches an effect that failed to prepare")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
    }
}
