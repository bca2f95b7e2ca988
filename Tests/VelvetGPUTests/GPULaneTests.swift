import Foundation
import VelvetGPU
import VelvetTestSupport
import XCTest

/// Recorders go to their thread's lane (`GPULane`): the look-ahead's to its own queue where
/// the device has a second compute family, the frames' to the main one. What one lane
/// writes, the other reads once the host has waited for it (the renderer's hand-off).
final class GPULaneTests: GPUTestCase {
    func testTheLaneIsTheCallingThreadsOwn() throws {
        let context = try self.context
        XCTAssertEqual(GPULane.current, .main)
        let recorder = try CommandRecorder(context: context)
        XCTAssertEqual(recorder.lane, .main)
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var seen: (before: GPULane, after: GPULane, recorder: GPULane?) = (.main, .main, nil)
        let thread = Thread { [context] in
            seen.before = GPULane.current
            GPULane.lookAhead.useOnThisThread()
            seen.after = GPULane.current
            seen.recorder = try? CommandRecorder(context: context).lane
            done.signal()
        }
        thread.start()
        done.wait()
        XCTAssertEqual(seen.before, .main, "a new thread starts on the main lane")
        XCTAssertEqual(seen.after, .lookAhead)
        XCTAssertEqual(seen.recorder, .lookAhead, "a recorder made there records for the look-ahead")
        XCTAssertEqual(GPULane.current, .main, "the lane of one thread is not another's")
    }

    func testWhatOneLaneWroteTheOtherReads() throws {
        let context = try self.context
        var random = SeededGenerator(state: 3)
        let image = try GPUImage(context: context, width: 67, height: 31, format: .rgba16f)
        let buffer = try GPUBuffer(context: context, size: 4096)
        let bytes = (0..<image.byteCount).map { _ in UInt8.random(in: 0...255, using: &random) }
        let words = (0..<buffer.size).map { UInt8(truncatingIfNeeded: $0 &* 29) }
        for (writer, reader) in [(GPULane.lookAhead, GPULane.main), (.main, .lookAhead)] {
            let upload = try CommandRecorder(context: context, lane: writer)
            try bytes.withUnsafeBytes { try upload.upload($0, to: image) }
            try words.withUnsafeBytes { try upload.upload($0, to: buffer) }
            try upload.submit().wait()
            let download = try CommandRecorder(context: context, lane: reader)
            let pixels = try download.download(image)
            let stored = try download.download(buffer)
            try download.submit().wait()
            XCTAssertEqual(pixels.bytes, bytes, "image written on \(writer), read on \(reader)")
            XCTAssertEqual(stored.bytes, words, "buffer written on \(writer), read on \(reader)")
        }
        print("look-ahead queue of its own: \(context.hasLookAheadQueue)")
    }
}
