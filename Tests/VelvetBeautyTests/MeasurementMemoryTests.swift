import Foundation
import VelvetGPU
import VelvetTestSupport
import XCTest
@testable import VelvetBeauty

/// `MeasurementMemory` (`measurement_memory.comp`): per-entry measurements averaged over
/// frames by key, a repeat held exactly, a new key, an invalid measurement or a frame
/// without the entry starting afresh, positions passed through.
final class MeasurementMemoryTests: GPUTestCase {
    /// Four floats per entry: validity, two measured values, a position.
    private func memory() throws -> MeasurementMemory {
        try MeasurementMemory(context: context, stride: 4, validity: 0, passedRaw: 3..<4)
    }

    /// Runs one frame: `raw` (4 floats per key) through the memory; returns what the pass
    /// after it would read.
    private func frame(_ memory: MeasurementMemory, _ raw: [[Float]], keys: [MeasurementKey?]) throws -> [[Float]] {
        let floats = raw.flatMap { $0 }
        let stats = try GPUBuffer(context: context, size: max(1, floats.count) * 4)
        let recorder = try CommandRecorder(context: context)
        try floats.withUnsafeBytes { try recorder.upload($0, to: stats) }
        try memory.record(on: recorder, stats: stats, keys: keys)
        let readback = try recorder.download(stats)
        try recorder.submit().wait()
        let values = readback.raw.bindMemory(to: Float.self)
        return raw.indices.map { entry in (0..<4).map { values[entry * 4 + $0] } }
    }

    func testMeasurementsAreAveragedByKeyAndRepeatsHeld() throws {
        let memory = try memory()
        let face = MeasurementKey(track: 7, part: 0)
        let w = MeasurementMemory.newWeight
        // Fresh: the measurement as it is.
        XCTAssertEqual(try frame(memory, [[1, 10, 20, 5]], keys: [face]), [[1, 10, 20, 5]])
        // Then towards each new measurement by the weight; the position is passed through.
        let second = try frame(memory, [[1, 13, 26, 9]], keys: [face])[0]
        XCTAssertEqual(second[1], 10 + w * 3, accuracy: 1e-5)
        XCTAssertEqual(second[2], 20 + w * 6, accuracy: 1e-5)
        XCTAssertEqual(second[3], 9)
        // The same measurement again (a repeated frame): exactly what the frame before read.
        XCTAssertEqual(try frame(memory, [[1, 13, 26, 9]], keys: [face])[0], second)
        XCTAssertEqual(try frame(memory, [[1, 13, 26, 9]], keys: [face])[0], second)
        // A new measurement moves on from there.
        let fourth = try frame(memory, [[1, 13, 26.5, 9]], keys: [face])[0]
        XCTAssertEqual(fourth[1], second[1] + w * (13 - second[1]), accuracy: 1e-5)
        XCTAssertEqual(fourth[2], second[2] + w * (26.5 - second[2]), accuracy: 1e-5)
    }

    func testNewKeysInvalidMeasurementsAndGapsStartAfresh() throws {
        let memory = try memory()
        let right = MeasurementKey(track: 1, part: 0), left = MeasurementKey(track: 1, part: 1)
        _ = try frame(memory, [[1, 10, 10, 0], [1, 50, 50, 0]], keys: [right, left])
        // Entries keep their own averages whatever their order; a key not seen before, or an
        // entry without a key (a still), reads its own measurement.
        let other = MeasurementKey(track: 2, part: 0)
        let next = try frame(memory, [[1, 80, 80, 0], [1, 20, 20, 0], [1, 30, 30, 0], [1, 40, 40, 0]], keys: [left, right, other, nil])
        let w = MeasurementMemory.newWeight
        XCTAssertEqual(next[0][1], 50 + w * 30, accuracy: 1e-4)
        XCTAssertEqual(next[1][1], 10 + w * 10, accuracy: 1e-4)
        XCTAssertEqual(next[2], [1, 30, 30, 0])
        XCTAssertEqual(next[3], [1, 40, 40, 0])
        // An invalid measurement is read as it is, and the next valid one starts afresh.
        XCTAssertEqual(try frame(memory, [[0, 99, 99, 0]], keys: [right]), [[0, 99, 99, 0]])
        XCTAssertEqual(try frame(memory, [[1, 60, 60, 0]], keys: [right]), [[1, 60, 60, 0]])
        // `left` was missing from the last two frames: it starts afresh too.
        XCTAssertEqual(try frame(memory, [[1, 5, 5, 0]], keys: [left]), [[1, 5, 5, 0]])
        // A frame where the stage found nothing forgets every entry.
        memory.forgetAll()
        XCTAssertEqual(try frame(memory, [[1, 7, 7, 0]], keys: [left]), [[1, 7, 7, 0]])
    }

    func testManyKeysGrowTheMemory() throws {
        let memory = try memory()
        let keys = (0..<40).map { MeasurementKey(track: $0, part: 0) }
        let first = keys.indices.map { [1, Float($0), 0, 0] as [Float] }
        XCTAssertEqual(try frame(memory, first, keys: keys), first)
        let second = try frame(memory, keys.indices.map { [1, Float($0) + 3, 0, 0] }, keys: keys)
        for (index, values) in second.enumerated() {
            XCTAssertEqual(values[1], Float(index) + 3 * MeasurementMemory.newWeight, accuracy: 1e-4, "key \(index)")
        }
    }
}
