import VelvetBeauty
import XCTest

/// M15 on synthetic frames whose answer is known (the astronaut mesh's regions on 512x512).
final class TemporalStabilityTests: XCTestCase {
    private let side = 512

    private func face() throws -> BeautyFace { try FaceFixture.loadGeometry("astronaut").faces[0] }

    private func frame(_ value: UInt8) -> [UInt8] {
        var bytes = [UInt8](repeating: value, count: side * side * 4)
        for i in stride(from: 3, to: bytes.count, by: 4) { bytes[i] = 255 }
        return bytes
    }

    private func offset(_ point: SIMD2<Float>) -> Int { 4 * (Int(point.y) * side + Int(point.x)) }

    /// (a): a repeated frame whose output moves 3 levels at one pixel in the face gives 3;
    /// a change far from the face (beyond 1 IOD) keeps the frame still, and its output
    /// change there does not count; a changed face is not looked at.
    func testLargestChangeOnRepeatedFrames() throws {
        let face = try face()
        let cheek = offset(face.landmarks[50])
        var metric = QualityMetrics.TemporalStability()
        let input = frame(100), output = frame(110)
        metric.add(input: input, output: output, width: side, height: side, faces: [face])
        var moved = output
        moved[cheek] += 3
        metric.add(input: input, output: moved, width: side, height: side, faces: [face])
        var corner = input, cornerOut = moved
        corner[0] = 0
        cornerOut[0] = 200
        metric.add(input: corner, output: cornerOut, width: side, height: side, faces: [face])
        var changed = corner, changedOut = cornerOut
        changed[cheek + 1] = 120
        changedOut[cheek + 1] = 200
        metric.add(input: changed, output: changedOut, width: side, height: side, faces: [face])
        let result = metric.result
        XCTAssertEqual(result.stillFrames, 2)
        XCTAssertEqual(result.largestChangeOnStill, 3)
        XCTAssertEqual(result.frames, 4)
    }

    /// (b): the input rises 2 levels everywhere, the output 1: ratio 0.5; no input change: nil.
    func testChangeRatioInsideTheOval() throws {
        let face = try face()
        var still = QualityMetrics.TemporalStability()
        still.add(input: frame(100), output: frame(110), width: side, height: side, faces: [face])
        still.add(input: frame(100), output: frame(110), width: side, height: side, faces: [face])
        XCTAssertNil(still.result.changeRatio)

        var metric = QualityMetrics.TemporalStability()
        metric.add(input: frame(100), output: frame(110), width: side, height: side, faces: [face])
        metric.add(input: frame(102), output: frame(111), width: side, height: side, faces: [face])
        XCTAssertEqual(try XCTUnwrap(metric.result.changeRatio), 0.5, accuracy: 1e-12)
        XCTAssertEqual(metric.result.stillFrames, 0)
        XCTAssertNil(metric.result.largestChangeOnStill)
    }

    /// (c): a face whose oval the output left as the input, and a two-frame gap between
    /// found faces, count (3); a face gone longer than the gap limit does not.
    func testFramesWithoutBeauty() throws {
        let face = try face()
        var metric = QualityMetrics.TemporalStability(gapLimit: 15)
        let input = frame(100), treated = frame(104)
        metric.add(input: input, output: treated, width: side, height: side, faces: [face])
        metric.add(input: input, output: input, width: side, height: side, faces: [face])
        for _ in 0..<2 { metric.add(input: input, output: input, width: side, height: side, faces: []) }
        metric.add(input: input, output: treated, width: side, height: side, faces: [face])
        for _ in 0..<16 { metric.add(input: input, output: input, width: side, height: side, faces: []) }
        metric.add(input: input, output: treated, width: side, height: side, faces: [face])
        for _ in 0..<3 { metric.add(input: input, output: input, width: side, height: side, faces: []) }
        let result = metric.result
        XCTAssertEqual(result.framesWithoutBeauty, 3)
        XCTAssertEqual(result.framesWithFace, 4)
        XCTAssertEqual(result.frames, 25)
    }
}
