import Foundation
import VelvetGPU
import VelvetTestSupport
import XCTest
@testable import VelvetBeauty

/// `GainWindow` (`beauty_gain_window.comp`): the strength fit's per-face results averaged by
/// track over the frames around each frame, as many after as before, in the order a render
/// that records the skin fronts ahead of the blends calls it.
final class GainWindowTests: GPUTestCase {
    private let stride = StrengthFit.resultStride

    /// Runs `frames` (per frame: each face's key and results, nil for a frame without a fit)
    /// through a window of `lead`: the fronts `lead` frames ahead of the blends, as
    /// `SkinStage` adds them. Returns each frame's averages (nil: none).
    private func run(_ frames: [(keys: [MeasurementKey?], results: [[Float]])?], lead: Int = 2) throws -> [[[Float]]?] {
        let window = try GainWindow(context: context, lead: lead)
        var added = 0
        var out: [[[Float]]?] = []
        func add() throws {
            let frame = frames[added]
            added += 1
            guard let frame else { return window.add(results: nil, keys: []) }
            let floats = frame.results.flatMap { $0 }
            let buffer = try GPUBuffer(context: context, size: max(1, floats.count) * 4)
            let recorder = try CommandRecorder(context: context)
            try floats.withUnsafeBytes { try recorder.upload($0, to: buffer) }
            try recorder.submit().wait()
            window.add(results: buffer, keys: frame.keys)
        }
        for index in frames.indices {
            while added < min(frames.count, index + lead + 1) { try add() }
            let recorder = try CommandRecorder(context: context)
            let averaged = try window.record(on: recorder)
            let readback = try averaged.map { try recorder.download($0) }
            try recorder.submit().wait()
            out.append(readback.map { readback in
                let values = readback.raw.bindMemory(to: Float.self)
                return (0..<(frames[index]?.keys.count ?? 0)).map { face in (0..<stride).map { values[face * stride + $0] } }
            })
        }
        return out
    }

    /// Results whose gain is `gain` and whose other floats say the frame (so no two frames
    /// repeat each other unless asked to).
    private func results(gain: Float, frame: Int) -> [Float] {
        [gain] + (1..<stride).map { Float(frame * 10 + $0) }
    }

    /// A gain that steps from 1 to 3 at frame 5 is averaged over frames n - 2 ... n + 2: the
    /// change starts two frames before the step and ends two after, symmetric about it (the
    /// causal average, `MeasurementMemory`, would not move before frame 5); the other floats
    /// are averaged alike; the first and last frames average over the frames there are.
    func testAStepIsFollowedWithoutLag() throws {
        let face = MeasurementKey(track: 4, part: 0)
        let gains: [Float] = (0..<10).map { $0 < 5 ? 1 : 3 }
        let frames = gains.indices.map { index in ([face] as [MeasurementKey?], [results(gain: gains[index], frame: index)]) }
        let out = try run(frames)
        for index in gains.indices {
            let window = max(0, index - 2)...min(gains.count - 1, index + 2)
            let expected = window.map { gains[$0] }.reduce(0, +) / Float(window.count)
            XCTAssertEqual(out[index]?[0][0] ?? -1, expected, accuracy: 1e-5, "frame \(index)")
            let other = window.map { Float($0 * 10 + 1) }.reduce(0, +) / Float(window.count)
            XCTAssertEqual(out[index]?[0][1] ?? -1, other, accuracy: 1e-4, "frame \(index), second float")
        }
        XCTAssertEqual(out[3]?[0][0] ?? -1, 1.4, accuracy: 1e-5, "moves two frames before the step")
        XCTAssertEqual((out[4]![0][0] + out[5]![0][0]) / 2, 2, accuracy: 1e-5, "symmetric about the step")
        XCTAssertEqual(out[7]?[0][0] ?? -1, 3, accuracy: 1e-5, "settled two frames after")
    }

    /// A face's results equal in every float to its results in the frame before (a repeated
    /// frame) keep that frame's average exactly, though the window has moved on.
    func testARepeatKeepsTheAverage() throws {
        let face = MeasurementKey(track: 1, part: 0)
        let raw: [[Float]] = [results(gain: 1, frame: 0), results(gain: 2, frame: 1), results(gain: 2, frame: 1),
                              results(gain: 5, frame: 3), results(gain: 6, frame: 4)]
        let out = try run(raw.map { ([face], [$0]) })
        XCTAssertEqual(out[2]?[0], out[1]?[0], "a repeat reads the frame before's average")
        XCTAssertEqual(out[1]?[0][0] ?? -1, (1 + 2 + 2 + 5) / 4, accuracy: 1e-5)
        XCTAssertEqual(out[3]?[0][0] ?? -1, (2 + 2 + 5 + 6) / 4, accuracy: 1e-5, "a change is averaged again")
    }

    /// Faces are averaged with their own track only, whatever their order in each frame; a
    /// track missing from a frame, or a frame without a fit, is left out of the window; a
    /// face without a track (a still) keeps its own results.
    func testTracksAreAveragedApart() throws {
        let a = MeasurementKey(track: 1, part: 0), b = MeasurementKey(track: 2, part: 0)
        let frames: [(keys: [MeasurementKey?], results: [[Float]])?] = [
            ([a, b], [results(gain: 1, frame: 0), results(gain: 10, frame: 0)]),
            ([b, a], [results(gain: 20, frame: 1), results(gain: 2, frame: 1)]),
            ([a, nil], [results(gain: 3, frame: 2), results(gain: 7, frame: 2)]),
            nil,
            ([b, a], [results(gain: 40, frame: 4), results(gain: 5, frame: 4)]),
        ]
        let out = try run(frames)
        XCTAssertEqual(out[0]?[0][0] ?? -1, (1 + 2 + 3) / 3, accuracy: 1e-5)
        XCTAssertEqual(out[0]?[1][0] ?? -1, (10 + 20) / 2, accuracy: 1e-5)
        XCTAssertEqual(out[1]?[0][0] ?? -1, (10 + 20) / 2, accuracy: 1e-5, "b: frames 0 and 1 (missing from 2, 3 has no fit)")
        XCTAssertEqual(out[1]?[1][0] ?? -1, (1 + 2 + 3) / 3, accuracy: 1e-5, "a: frames 0-2")
        XCTAssertEqual(out[2]?[0][0] ?? -1, (1 + 2 + 3 + 5) / 4, accuracy: 1e-5, "a: frames 0-4 but the one without a fit")
        XCTAssertEqual(out[2]?[1][0] ?? -1, 7, "no track: its own")
        XCTAssertNil(out[3], "no fit, no averages")
        XCTAssertEqual(out[4]?[0][0] ?? -1, 40, accuracy: 1e-5, "b: frame 1 is out of frame 4's window")
        XCTAssertEqual(out[4]?[1][0] ?? -1, (3 + 5) / 2, accuracy: 1e-5)
    }
}
