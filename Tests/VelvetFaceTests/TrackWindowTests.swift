import VelvetFace
import XCTest

/// `TrackWindow` on made-up tracks with known truth (no GPU): no lag on motion, a repeat kept,
/// a gap interpolated, a leaving face held and faded, nothing read across a cut.
final class TrackWindowTests: XCTestCase {
    /// A 468-point face: a ring of radius 40 px (so the IOD is about 80 px) moved to `centre`.
    private static func face(_ centre: SIMD2<Float>, track: Int = 1, missed: Int = 0, weight: Float = 1) -> Face {
        let points = (0..<468).map { index -> SIMD3<Float> in
            let angle = Float(index) / 468 * 2 * .pi
            return SIMD3(centre.x + 40 * cos(angle), centre.y + 40 * sin(angle), 0)
        }
        return Face(landmarks: points, score: 0.9, trackID: track, missedFrames: missed, weight: weight)
    }

    private static func largestError(_ a: Face, _ b: Face) -> Float {
        zip(a.points, b.points).map { let d = $0 - $1; return (d * d).sum().squareRoot() }.max() ?? .infinity
    }

    /// Motion that speeds up (x = 2t + 0.05t², in frames): the symmetric quadratic fit puts
    /// every frame where it is, at the ends of the track too. A causal filter would lag it.
    func testNoLagOnAcceleratingMotion() {
        let truth = (0..<30).map { t -> Face in let t = Float(t); return Self.face(SIMD2(100 + 2 * t + 0.05 * t * t, 120)) }
        let smoothed = TrackWindow.smoothing(truth.map { ([$0], false) }, lookAhead: 6)
        for (index, (result, expected)) in zip(smoothed, truth).enumerated() {
            XCTAssertLessThan(Self.largestError(try XCTUnwrap(result.first), expected), 0.01, "frame \(index)")
        }
    }

    /// Alternating noise of ±1 px on a still face is averaged out to well under a tenth.
    func testNoiseOnAStillFaceIsAveraged() throws {
        let frames = (0..<30).map { t -> [Face] in
            let noise: Float = t % 2 == 0 ? 1 : -1
            return [Self.face(SIMD2(100 + noise, 120))]
        }
        let smoothed = TrackWindow.smoothing(frames.map { ($0, false) }, lookAhead: 6)
        print("still face, ±1 px alternating: left \(try (6..<24).map { Self.largestError(try XCTUnwrap(smoothed[$0].first), Self.face(SIMD2(100, 120))) })")
        for index in 6..<24 {
            XCTAssertLessThan(Self.largestError(try XCTUnwrap(smoothed[index].first), Self.face(SIMD2(100, 120))), 0.1, "frame \(index)")
        }
    }

    /// A face shown twice at each position: the second frame of each pair is the first's result exactly.
    func testARepeatGivesTheSameResult() throws {
        let frames = (0..<24).map { t -> [Face] in
            let position = Float(t / 2)
            let wobble: Float = t / 2 % 2 == 0 ? 0.5 : -0.5
            return [Self.face(SIMD2(100 + 3 * position + wobble, 120))]
        }
        let smoothed = TrackWindow.smoothing(frames.map { ($0, false) }, lookAhead: 6)
        for pair in stride(from: 0, to: 24, by: 2) {
            XCTAssertEqual(smoothed[pair + 1].first?.landmarks, smoothed[pair].first?.landmarks, "frame \(pair + 1)")
            if pair + 2 < 24 { XCTAssertNotEqual(smoothed[pair + 2].first?.landmarks, smoothed[pair].first?.landmarks, "the face moves on") }
        }
    }

    /// Held frames (the tracker's last landmarks, fading) between two sightings become the
    /// motion between them at full weight; held frames after the last sighting stay where the
    /// face was last shown, fading.
    func testAGapIsInterpolatedAndALeavingFaceFades() throws {
        var frames: [[Face]] = []
        for t in 0..<20 {
            let at = SIMD2<Float>(100 + 2 * Float(t), 120)
            switch t {
            case 8, 9: frames.append([Self.face(SIMD2(100 + 2 * 7, 120), missed: t - 7, weight: t == 8 ? 0.75 : 0.5)])
            case 15, 16, 17: frames.append([Self.face(SIMD2(100 + 2 * 14, 120), missed: t - 14, weight: 1 - Float(t - 14) / 4)])
            case 18, 19: frames.append([])
            default: frames.append([Self.face(at)])
            }
        }
        let smoothed = TrackWindow.smoothing(frames.map { ($0, false) }, lookAhead: 6)
        for index in [8, 9] {
            let face = try XCTUnwrap(smoothed[index].first)
            XCTAssertEqual(face.weight, 1, "frame \(index): filled at full weight")
            XCTAssertLessThan(Self.largestError(face, Self.face(SIMD2(100 + 2 * Float(index), 120))), 0.01, "frame \(index): on the motion")
        }
        XCTAssertEqual(smoothed[15...17].map { $0.first?.weight }, [0.75, 0.5, 0.25])
        for index in 15...17 { XCTAssertEqual(smoothed[index].first?.landmarks, smoothed[14].first?.landmarks, "frame \(index)") }
        XCTAssertEqual(smoothed[18...].map(\.count), [0, 0])
    }

    /// A cut: the frames before it come out as the first shot alone gives them, and after it as the second alone.
    func testNothingIsReadAcrossACut() {
        let first = (0..<8).map { t -> [Face] in
            let noise: Float = t % 2 == 0 ? 0.7 : 0
            return [Self.face(SIMD2(100 + 3 * Float(t) + noise, 120))]
        }
        let second = (0..<8).map { t -> [Face] in
            let noise: Float = t % 3 == 0 ? 0.4 : 0
            return [Self.face(SIMD2(200 - Float(t) + noise, 80), track: 2)]
        }
        let whole = TrackWindow.smoothing(first.map { ($0, false) } + second.enumerated().map { ($0.element, $0.offset == 0) }, lookAhead: 6)
        XCTAssertEqual(Array(whole[..<8]).map { $0.map(\.landmarks) },
                       TrackWindow.smoothing(first.map { ($0, false) }, lookAhead: 6).map { $0.map(\.landmarks) })
        XCTAssertEqual(Array(whole[8...]).map { $0.map(\.landmarks) },
                       TrackWindow.smoothing(second.map { ($0, false) }, lookAhead: 6).map { $0.map(\.landmarks) })
    }
}
