import Foundation
import VelvetGPU
import VelvetMedia
import VelvetTestSupport
import XCTest

/// The renderer's look-ahead thread: `look(ahead:)` sees every frame once, in order, on a
/// thread of its own; `record` for frame N comes only once frame N + K has been seen; and an
/// error thrown by the look-ahead fails the render with that error and leaves no output.
final class LookAheadThreadTests: GPUTestCase {
    private struct Failure: Error, Equatable { let frame: Int }

    /// Logs what the renderer asks of it; optionally fails the look-ahead at one frame.
    private final class Probe: FrameEffect, @unchecked Sendable {
        let lookAhead: Int
        let failsAt: Int?
        /// Whether a look takes its 2 ms spinning on the CPU instead of sleeping.
        let spins: Bool
        private let lock = NSLock()
        private var seen: [Int] = []
        private var lookThreads = Set<ObjectIdentifier>()
        private var recordThreads = Set<ObjectIdentifier>()
        /// The GPU lanes the calls' recorders would go to.
        private var lookLanes = Set<GPULane>()
        private var recordLanes = Set<GPULane>()
        /// For each recorded frame, the frames seen by then.
        private(set) var seenWhenRecorded: [(frame: Int, seen: Int)] = []

        init(lookAhead: Int, failsAt: Int? = nil, spins: Bool = false) {
            (self.lookAhead, self.failsAt, self.spins) = (lookAhead, failsAt, spins)
        }

        var log: (seen: [Int], lookThreads: Set<ObjectIdentifier>, recordThreads: Set<ObjectIdentifier>) {
            lock.withLock { (seen, lookThreads, recordThreads) }
        }

        var lanes: (look: Set<GPULane>, record: Set<GPULane>) { lock.withLock { (lookLanes, recordLanes) } }

        func look(ahead frame: EffectFrame) throws {
            if frame.index == failsAt { throw Failure(frame: frame.index) }
            // A tracker's round trips: the GPU thread must not wait on them in turn.
            if spins {
                // 2 ms of this thread's CPU time, however often it is preempted meanwhile.
                let end = Self.threadCPUSeconds() + 0.002
                while Self.threadCPUSeconds() < end {}
            } else {
                usleep(2000)
            }
            lock.withLock {
                seen.append(frame.index)
                lookThreads.insert(ObjectIdentifier(Thread.current))
                lookLanes.insert(GPULane.current)
            }
        }

        static func threadCPUSeconds() -> Double {
            var now = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
            return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        }

        func record(_ frame: EffectFrame, on recorder: CommandRecorder) throws -> FrameChange {
            lock.withLock {
                seenWhenRecorded.append((frame.index, seen.count))
                recordThreads.insert(ObjectIdentifier(Thread.current))
                recordLanes.insert(GPULane.current)
            }
            return .none
        }
    }

    private func clip(_ scratch: Scratch, frames: Int) throws -> String {
        let path = scratch.path("clip.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=96x64:rate=10", "-frames:v", "\(frames)", "-c:v", "ffv1", path])
        return path
    }

    func testLookAheadRunsInOrderOnItsOwnThreadAheadOfRecord() throws {
        let scratch = try Scratch()
        let input = try clip(scratch, frames: 12)
        let probe = Probe(lookAhead: 3)
        let summary = try VideoRenderer(context: context).render(input: input, output: scratch.path("out.mkv"),
                                                                  settings: EncoderSettings(), effect: probe)
        XCTAssertEqual(summary.frames, 12)
        let log = probe.log
        XCTAssertEqual(log.seen, Array(0..<12), "every frame once, in order")
        XCTAssertEqual(log.lookThreads.count, 1)
        XCTAssertEqual(log.recordThreads.count, 1)
        XCTAssertTrue(log.lookThreads.isDisjoint(with: log.recordThreads), "look(ahead:) on a thread of its own")
        XCTAssertEqual(probe.lanes.look, [.lookAhead], "the look-ahead records for its own queue")
        XCTAssertEqual(probe.lanes.record, [.main], "the frames record for the main queue")
        XCTAssertEqual(probe.seenWhenRecorded.map(\.frame), Array(0..<12))
        for (frame, seen) in probe.seenWhenRecorded {
            XCTAssertGreaterThanOrEqual(seen, min(frame + 3 + 1, 12), "frame \(frame) recorded before frame \(frame + 3) was seen")
        }
        XCTAssertGreaterThan(summary.busySeconds.lookAhead, 0.002 * 12 * 0.9, "the look-ahead thread's busy time")
        XCTAssertLessThan(summary.cpuSeconds.lookAhead, summary.busySeconds.lookAhead / 2, "a sleeping wait uses no CPU")
        XCTAssertGreaterThan(summary.firstFrameSeconds, 0)
        XCTAssertLessThan(summary.firstFrameSeconds, summary.seconds)
        XCTAssertGreaterThan(summary.steadyFramesPerSecond, 0)
    }

    /// The CPU clocks count work, not waits: a look-ahead that spins shows its 2 ms a frame
    /// there, and the process's CPU time covers its threads'.
    func testCPUTimesCountWorkNotWaits() throws {
        let scratch = try Scratch()
        let input = try clip(scratch, frames: 12)
        let summary = try VideoRenderer(context: context).render(input: input, output: scratch.path("out.mkv"),
                                                                  settings: EncoderSettings(), effect: Probe(lookAhead: 3, spins: true))
        XCTAssertGreaterThanOrEqual(summary.cpuSeconds.lookAhead, 0.002 * 12 * 0.99, "a spinning look-ahead's CPU time")
        XCTAssertLessThanOrEqual(summary.cpuSeconds.lookAhead, summary.busySeconds.lookAhead * 1.05)
        let threads = summary.cpuSeconds.decode + summary.cpuSeconds.gpu + summary.cpuSeconds.encode + summary.cpuSeconds.lookAhead
        XCTAssertGreaterThanOrEqual(summary.cpuSeconds.process, threads * 0.99, "the process's CPU time holds its threads'")
    }

    func testALookAheadErrorFailsTheRenderAndLeavesNoOutput() throws {
        let scratch = try Scratch()
        let input = try clip(scratch, frames: 12)
        let output = scratch.path("out.mkv")
        XCTAssertThrowsError(try VideoRenderer(context: context).render(input: input, output: output, settings: EncoderSettings(),
                                                                        effect: Probe(lookAhead: 3, failsAt: 7))) { error in
            XCTAssertEqual(error as? Failure, Failure(frame: 7))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
    }
}
