import Foundation
import VelvetFiles
import VelvetGPU
import VelvetMedia
import VelvetTestSupport
import XCTest

/// Two frames in flight (`FrameEffect.framesInFlight`): with a look-ahead, the renderer records
/// frame N + 1 before it waits for frame N, never has more frames unfinished than the effect
/// takes, and tells the effect each frame has completed, in order, before anything it read
/// back of that frame is read.
final class FramesInFlightTests: GPUTestCase {
    /// Downloads each frame's working image in `record` and reads it in `completed(frame:)`.
    private final class Probe: FrameEffect, @unchecked Sendable {
        enum Event: Equatable { case record(Int), completed(Int) }
        let framesInFlight: Int
        let lookAhead: Int
        private(set) var events: [Event] = []
        /// FNV-1a of each frame's working image as read back, by frame.
        private(set) var digests: [Int: UInt64] = [:]
        private var pending: [(frame: Int, readback: GPUReadback)] = []

        init(framesInFlight: Int, lookAhead: Int = 2) { (self.framesInFlight, self.lookAhead) = (framesInFlight, lookAhead) }

        func record(_ frame: EffectFrame, on recorder: CommandRecorder) throws -> FrameChange {
            events.append(.record(frame.index))
            pending.append((frame.index, try recorder.download(frame.input)))
            return .none
        }

        func completed(frame index: Int) throws {
            events.append(.completed(index))
            while let first = pending.first, first.frame <= index {
                pending.removeFirst()
                var hash = FNV1a()
                hash.update(first.readback.raw)
                digests[first.frame] = hash.value
            }
        }
    }

    private func render(framesInFlight: Int, frames: Int, scratch: Scratch, lookAhead: Int = 2, keepsImages: Bool? = nil) throws -> Probe {
        let input = scratch.path("clip.mkv")
        if !FileManager.default.fileExists(atPath: input) {
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64:rate=10", "-frames:v", "\(frames)", "-c:v", "ffv1", input])
        }
        let probe = Probe(framesInFlight: framesInFlight, lookAhead: lookAhead)
        let renderer = try VideoRenderer(context: context)
        if let keepsImages { renderer.keepsLookAheadImages = keepsImages }
        let summary = try renderer.render(input: input, output: scratch.path("out-\(framesInFlight)-\(lookAhead).mkv"),
                                          settings: EncoderSettings(), effect: probe)
        XCTAssertEqual(summary.frames, frames)
        return probe
    }

    /// Per event, how many frames were recorded and not yet completed just after it.
    private func unfinished(_ events: [Probe.Event]) -> [Int] {
        var open = 0
        return events.map { event in
            if case .record = event { open += 1 } else { open -= 1 }
            return open
        }
    }

    func testTwoFramesInFlightOverlapAndReadBackWhatOneAtATimeDoes() throws {
        let scratch = try Scratch()
        let frames = 12
        let one = try render(framesInFlight: 1, frames: frames, scratch: scratch)
        let two = try render(framesInFlight: 2, frames: frames, scratch: scratch)
        for probe in [one, two] {
            XCTAssertEqual(probe.events.filter { if case .record = $0 { true } else { false } }, (0..<frames).map { .record($0) })
            XCTAssertEqual(probe.events.filter { if case .completed = $0 { true } else { false } }, (0..<frames).map { .completed($0) })
            for index in 0..<frames {
                XCTAssertLessThan(probe.events.firstIndex(of: .record(index))!, probe.events.firstIndex(of: .completed(index))!)
            }
            XCTAssertLessThanOrEqual(unfinished(probe.events).max() ?? 0, probe.framesInFlight)
        }
        // One at a time: a frame completes before the next is recorded.
        XCTAssertEqual(one.events, (0..<frames).flatMap { [.record($0), .completed($0)] })
        // Two: every frame but the last is still unfinished when the next is recorded.
        for index in 0..<(frames - 1) {
            XCTAssertLessThan(two.events.firstIndex(of: .record(index + 1))!, two.events.firstIndex(of: .completed(index))!,
                              "frame \(index + 1) recorded before frame \(index) is waited for")
        }
        XCTAssertEqual(Set(one.digests.values).count, frames, "every frame differs")
        XCTAssertEqual(two.digests, one.digests, "each frame read back once complete, as with one frame in flight")
    }

    /// With a look-ahead the render converts the planes the look-ahead uploaded (kept per
    /// frame until it has finished) instead of uploading the frame again, or (a CPU device's
    /// way) reads the look-ahead's own working image of the frame: every frame's working image
    /// is the one a render without look-ahead, which uploads each frame, makes, both ways, at
    /// every look-ahead and with one or two frames in flight (the sets turn over several times).
    func testALookedAtFrameIsRenderedFromItsOwnUpload() throws {
        let scratch = try Scratch()
        let frames = 24
        let uploaded = try render(framesInFlight: 1, frames: frames, scratch: scratch, lookAhead: 0)
        XCTAssertEqual(Set(uploaded.digests.values).count, frames, "every frame differs")
        for keepsImages in [false, true] {
            for lookAhead in [1, 3, 6] {
                for framesInFlight in [1, 2] {
                    let probe = try render(framesInFlight: framesInFlight, frames: frames, scratch: scratch, lookAhead: lookAhead,
                                           keepsImages: keepsImages)
                    XCTAssertEqual(probe.digests, uploaded.digests,
                                   "look-ahead \(lookAhead), \(framesInFlight) in flight, keeps images \(keepsImages)")
                }
            }
        }
    }
}
