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
        /// Later frames' working images asked for in each `record` (`EffectFrame.upcoming`).
        let asksAhead: Int
        private(set) var events: [Event] = []
        /// FNV-1a of each frame's working image as read back, by frame.
        private(set) var digests: [Int: UInt64] = [:]
        /// The same of the later frames' images `upcoming` gave, by frame, each time asked.
        private(set) var upcomingDigests: [Int: [UInt64]] = [:]
        /// Frames `upcoming` gave no image of.
        private(set) var notGiven: Set<Int> = []
        private var pending: [(frame: Int, readback: GPUReadback, recorded: Int)] = []

        init(framesInFlight: Int, lookAhead: Int = 2, asksAhead: Int = 0) {
            (self.framesInFlight, self.lookAhead, self.asksAhead) = (framesInFlight, lookAhead, asksAhead)
        }

        func record(_ frame: EffectFrame, on recorder: CommandRecorder) throws -> FrameChange {
            events.append(.record(frame.index))
            for later in stride(from: frame.index + 1, through: frame.index + asksAhead, by: 1) {
                guard let image = try frame.upcoming?(later) else {
                    notGiven.insert(later)
                    continue
                }
                pending.append((later, try recorder.download(image), frame.index))
            }
            pending.append((frame.index, try recorder.download(frame.input), frame.index))
            return .none
        }

        func completed(frame index: Int) throws {
            events.append(.completed(index))
            while let first = pending.first, first.recorded <= index {
                pending.removeFirst()
                var hash = FNV1a()
                hash.update(first.readback.raw)
                if first.frame == first.recorded {
                    digests[first.frame] = hash.value
                } else {
                    upcomingDigests[first.frame, default: []].append(hash.value)
                }
            }
        }
    }

    private func render(framesInFlight: Int, frames: Int, scratch: Scratch, lookAhead: Int = 2, keepsImages: Bool? = nil,
                        asksAhead: Int = 0) throws -> Probe {
        let input = scratch.path("clip.mkv")
        if !FileManager.default.fileExists(atPath: input) {
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64:rate=10", "-frames:v", "\(frames)", "-c:v", "ffv1", input])
        }
        let probe = Probe(framesInFlight: framesInFlight, lookAhead: lookAhead, asksAhead: asksAhead)
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

    /// `EffectFrame.upcoming` gives each later frame's working image as the frame's own
    /// upload makes it, every time it is asked (converted early where the look-ahead keeps no
    /// image of it: the frame is then rendered from that image, as the digests of the frames'
    /// own inputs show), and nothing past the input's end.
    func testUpcomingFramesAreTheFramesOwnImages() throws {
        let scratch = try Scratch()
        let frames = 16
        let uploaded = try render(framesInFlight: 1, frames: frames, scratch: scratch, lookAhead: 0)
        for keepsImages in [false, true] {
            for (lookAhead, framesInFlight) in [(2, 1), (2, 2), (6, 2)] {
                let probe = try render(framesInFlight: framesInFlight, frames: frames, scratch: scratch, lookAhead: lookAhead,
                                       keepsImages: keepsImages, asksAhead: 2)
                let label = "look-ahead \(lookAhead), \(framesInFlight) in flight, keeps images \(keepsImages)"
                XCTAssertEqual(probe.digests, uploaded.digests, label)
                for frame in 1..<frames {
                    let asked = probe.upcomingDigests[frame] ?? []
                    XCTAssertEqual(asked.count, min(frame, 2), "\(label): frame \(frame) asked for by the frames before it")
                    XCTAssertEqual(Set(asked), [uploaded.digests[frame]!], "\(label): frame \(frame)")
                }
                XCTAssertEqual(probe.notGiven, [frames, frames + 1], label)
            }
        }
    }
}
