import Foundation
import VelvetFace
import VelvetGPU
import VelvetMedia
import VelvetTestSupport
import XCTest

/// The look-ahead tracker (`--look-ahead K`) against the causal one on the synthetic clips of
/// `TrackingTests`: jitter (M11) at most half the causal figure, known motion (M10) no worse,
/// a cut with nothing of either shot in the other, and a short gap filled by interpolation.
final class LookAheadTests: GPUTestCase {
    typealias Clip = TrackingTests.SyntheticClip

    /// Runs `LookAheadTracker` over `frames` (each rendered by `frame`), handing out each
    /// frame's faces as a render would: once K frames after it are in, the rest at the end.
    /// Also returns the tracker's raw faces and cuts, for other K through `TrackWindow`.
    private func lookAhead(frames: Range<Int>, lookAhead: Int = LookAheadTracker.standardFrames, options: FaceTrackerOptions = noSegmentation,
                           frame: (Int) throws -> GPUImage) throws -> (faces: [[Face]], raw: [(faces: [Face], isCut: Bool)]) {
        let tracker = try LookAheadTracker(context: context, options: options, lookAhead: lookAhead, files: FaceTestSupport.models)
        var faces: [[Face]] = [], raw: [(faces: [Face], isCut: Bool)] = []
        for index in frames {
            let image = try frame(index)
            try tracker.analyze(image, time: Double(index) / 30)
            raw.append((tracker.lastAnalysed, tracker.tracker.lastFrameWasCut))
            while tracker.analysed - tracker.emitted > lookAhead {
                faces.append(try tracker.result(index: tracker.emitted).faces)
            }
        }
        while tracker.emitted < tracker.analysed { faces.append(try tracker.result(index: tracker.emitted).faces) }
        XCTAssertEqual(faces.count, frames.count)
        return (faces, raw)
    }

    private static var noSegmentation: FaceTrackerOptions {
        var options = FaceTrackerOptions.video
        options.segmentationInterval = 0
        return options
    }

    private func causal(frames: Range<Int>, options: FaceTrackerOptions = noSegmentation, frame: (Int) throws -> GPUImage) throws -> [[Face]] {
        let tracker = try FaceTracker(context: context, options: options, files: FaceTestSupport.models)
        return try frames.map { try tracker.process(try frame($0), time: Double($0) / 30).faces }
    }

    /// RMS per-point motion between frames over the mean IOD (M11), one face per frame.
    private static func jitter(_ frames: [[Face]]) -> Float {
        var squared: [Float] = [], iods: [Float] = []
        for (before, after) in zip(frames, frames.dropFirst()) {
            guard let a = before.first, let b = after.first else { continue }
            squared += zip(a.points, b.points).map { let d = $0 - $1; return (d * d).sum() }
            iods.append(b.interOcularDistance)
        }
        return FaceTestSupport.mean(squared).squareRoot() / FaceTestSupport.mean(iods)
    }

    private func astronaut() throws -> (clip: Clip, centre: SIMD2<Double>) {
        let fixture = try MediaPipeFixture("astronaut")
        let centre = FaceBox(bounding: try XCTUnwrap(fixture.landmarks.first)).centre
        let clip = try Clip(photo: try FaceTestSupport.photo("astronaut", context: context), width: 320, height: 240,
                            noiseSigma: 2 / 255, context: context)
        return (clip, SIMD2(Double(centre.x), Double(centre.y)))
    }

    private static func motion(_ index: Int, _ centre: SIMD2<Double>) -> SimilarityTransform {
        TrackingTests.motion(frame: index, faceCentre: centre, photoCentre: SIMD2(256, 256), baseScale: 1.0)
    }

    /// M11 on the still photo with fresh noise (σ 2/255), 60 frames: the look-ahead's jitter
    /// is at most half the causal tracker's.
    func testLookAheadHalvesTheJitterOnAStillFace() throws {
        let (clip, centre) = try astronaut()
        let still = Self.motion(0, centre)
        let causal = try causal(frames: 0..<60) { try clip.render(still, index: $0) }
        let (ahead, raw) = try lookAhead(frames: 0..<60) { try clip.render(still, index: $0) }
        XCTAssertEqual(causal.map(\.count), Array(repeating: 1, count: 60))
        XCTAssertEqual(ahead.map(\.count), Array(repeating: 1, count: 60))
        let m11Causal = Self.jitter(causal), m11 = Self.jitter(ahead)
        let sweep = [0, 2, 4, 6, 8, 12].map { k in "K=\(k) \(Self.jitter(TrackWindow.smoothing(raw, lookAhead: k)) * 100)" }
        print("M11 look-ahead: \(m11 * 100) % IOD (K=\(LookAheadTracker.standardFrames)), causal \(m11Causal * 100) %; "
              + "raw landmarks through the window: \(sweep.joined(separator: ", "))")
        XCTAssertLessThanOrEqual(m11, 0.5 * m11Causal, "M11 with look-ahead at most half the causal figure")
    }

    /// M10 on the known motion (shift, ±15°, ±10 % over 60 frames, after 3 still frames):
    /// the look-ahead follows it no worse than the causal tracker, with no lag to make up.
    func testLookAheadFollowsKnownMotionNoWorse() throws {
        let (clip, centre) = try astronaut()
        let start = Self.motion(0, centre)
        func frame(_ index: Int) throws -> GPUImage { try clip.render(index < 0 ? start : Self.motion(index, centre), index: index) }
        let causal = try causal(frames: -3..<60, frame: frame)
        let (ahead, raw) = try lookAhead(frames: -3..<60, frame: frame)
        // The reference, for both: the mesh on the last still frame (raw: no filter's choice in
        // it), carried through the motion.
        let reference = try XCTUnwrap(raw[2].faces.first).points.map { clip.invert(start, $0) }
        func m10(_ frames: [[Face]]) throws -> Float {
            let errors = try (0..<60).map { index -> Float in
                let face = try XCTUnwrap(frames[index + 3].first, "frame \(index)")
                let motion = Self.motion(index, centre)
                return FaceTestSupport.meanError(face.points, reference: reference.map { clip.apply(motion, $0) })
            }
            return FaceTestSupport.mean(errors)
        }
        let m10Causal = try m10(causal), m10Ahead = try m10(ahead)
        let sweep = try [0, 2, 4, 6, 8, 12].map { k in "K=\(k) \(try m10(TrackWindow.smoothing(raw, lookAhead: k)) * 100)" }
        print("M10 look-ahead: \(m10Ahead * 100) % IOD (K=\(LookAheadTracker.standardFrames)), causal \(m10Causal * 100) %; "
              + "raw landmarks through the window: \(sweep.joined(separator: ", "))")
        XCTAssertLessThanOrEqual(m10Ahead, m10Causal, "M10 with look-ahead no worse than causal")
        XCTAssertLessThanOrEqual(m10Ahead, 0.01, "M10")
    }

    /// A cut from one photo to another (as `TrackingTests`): each shot's frames come out as a
    /// look-ahead over that shot alone gives them, so nothing of one blends into the other.
    func testACutSplitsTheWindow() throws {
        var options = Self.noSegmentation
        options.detector = .short
        let astronaut = try Clip(photo: try FaceTestSupport.photo("astronaut", context: context), width: 320, height: 240,
                                 noiseSigma: 1 / 255, context: context)
        let grace = try Clip(photo: try FaceTestSupport.photo("grace_hopper", context: context), width: 320, height: 240,
                             noiseSigma: 1 / 255, context: context)
        let first = SimilarityTransform(translation: (0, 40)), second = SimilarityTransform(scale: 0.45, translation: (0, 20))
        func frame(_ index: Int) throws -> GPUImage {
            index < 6 ? try astronaut.render(first, index: index) : try grace.render(second, index: index)
        }
        let (whole, raw) = try lookAhead(frames: 0..<10, options: options, frame: frame)
        let (firstShot, _) = try lookAhead(frames: 0..<6, options: options, frame: frame)
        let (secondShot, _) = try lookAhead(frames: 6..<10, options: options, frame: frame)
        print("cut, look-ahead: tracks \(whole.map { $0.map(\.trackID) }), cut on \(raw.indices.filter { raw[$0].isCut })")
        XCTAssertEqual(raw.indices.filter { raw[$0].isCut }, [6])
        XCTAssertEqual(whole.map(\.count), Array(repeating: 1, count: 10))
        XCTAssertEqual(Array(whole[..<6]).map { $0.map(\.landmarks) }, firstShot.map { $0.map(\.landmarks) },
                       "the first shot's frames read nothing after the cut")
        XCTAssertEqual(Array(whole[6...]).map { $0.map(\.landmarks) }, secondShot.map { $0.map(\.landmarks) },
                       "the second shot's frames read nothing before it")
        XCTAssertNotEqual(whole[5].first?.trackID, whole[6].first?.trackID, "a new track after the cut")
    }

    /// The known motion with the face hidden (a grey patch) in frames 12-16, then from frame 26
    /// on. The gap, longer than the causal tracker's 3-frame hold, is filled: the same track at
    /// full weight, its landmarks interpolated between the sightings (near the true motion,
    /// where the causal tracker holds them still and fades them, then loses the face). Hidden
    /// for good, the face fades out over K + 1 frames where it was last shown, then goes.
    func testAGapIsFilledAndALeavingFaceFades() throws {
        let fixture = try MediaPipeFixture("astronaut")
        let (clip, centre) = try astronaut()
        var raw = try FaceTestSupport.rawPhoto("astronaut")
        let box = FaceBox(bounding: try XCTUnwrap(fixture.landmarks.first))
        for y in max(0, Int(box.y) - 10)..<min(raw.height, Int(box.y + box.height) + 10) {
            for x in max(0, Int(box.x) - 10)..<min(raw.width, Int(box.x + box.width) + 10) {
                for c in 0..<3 { raw.pixels[(y * raw.width + x) * 4 + c] = 128 }
            }
        }
        let hidden = try Clip(photo: try FaceTestSupport.image(raw.pixels, width: raw.width, height: raw.height, context: context),
                              width: 320, height: 240, noiseSigma: 2 / 255, context: context)
        let gap = 12...16, gone = 26
        let hold = FaceTrackerOptions.video.holdFrames, window = LookAheadTracker.standardFrames
        XCTAssertGreaterThan(gap.count, hold, "a gap longer than the causal hold")
        func frame(_ index: Int) throws -> GPUImage {
            let motion = Self.motion(index, centre)
            return gap.contains(index) || index >= gone ? try hidden.render(motion, index: index) : try clip.render(motion, index: index)
        }
        let causal = try causal(frames: 0..<36, frame: frame)
        let (ahead, tracked) = try lookAhead(frames: 0..<36, frame: frame)
        XCTAssertTrue(tracked.allSatisfy { !$0.isCut }, "no cut: only the face changes")
        let reference = try XCTUnwrap(tracked[0].faces.first).points.map { clip.invert(Self.motion(0, centre), $0) }
        func error(_ face: Face?, _ index: Int) throws -> Float {
            let motion = Self.motion(index, centre)
            return FaceTestSupport.meanError(try XCTUnwrap(face, "frame \(index)").points, reference: reference.map { clip.apply(motion, $0) })
        }
        print("gap, look-ahead: \(ahead.enumerated().map { "\($0.offset): \($0.element.map { "#\($0.trackID) held \($0.missedFrames) w \($0.weight)" })" })")
        let id = try XCTUnwrap(ahead[0].first?.trackID)
        for index in 0..<gone { XCTAssertEqual(ahead[index].map(\.trackID), [id], "frame \(index): the one track") }
        for index in gap {
            XCTAssertEqual(tracked[index].faces.first?.missedFrames, index - gap.lowerBound + 1, "frame \(index): the tracker missed the face")
            XCTAssertEqual(ahead[index].first?.weight, 1, "frame \(index): a filled gap at full weight")
        }
        let seenError = try FaceTestSupport.mean((0..<gone).filter { !gap.contains($0) }.map { try error(ahead[$0].first, $0) })
        let gapError = try gap.map { try error(ahead[$0].first, $0) }
        // Holding the last sighting still, as a causal tracker must (and then gives up).
        let stillError = try gap.map { try error(ahead[gap.lowerBound - 1].first, $0) }
        let causalHeld = gap.lowerBound..<(gap.lowerBound + hold)
        XCTAssertTrue(causal[causalHeld.upperBound...gap.upperBound].allSatisfy(\.isEmpty), "the causal tracker gave the face up")
        print("gap: error \(gapError.map { $0 * 100 }) % IOD filled, \(stillError.map { $0 * 100 }) % held still; "
              + "\(seenError * 100) % on the frames seen")
        for (filled, still) in zip(gapError, stillError) {
            XCTAssertLessThan(filled, 0.5 * still, "interpolated: at most half the error of holding the face still")
        }
        XCTAssertLessThanOrEqual(gapError[0], 2 * seenError + 0.005, "next to a sighting, about as near as a seen frame")
        let fade = (1...window).map { [1 - Float($0) / Float(window + 1)] }
        XCTAssertEqual(ahead[gone...].prefix(window).map { $0.map(\.weight) }, fade, "fading out")
        for index in gone..<(gone + window) {
            XCTAssertEqual(ahead[index].first?.landmarks, ahead[gone - 1].first?.landmarks, "frame \(index): held where last shown")
        }
        XCTAssertTrue(ahead[(gone + window)...].allSatisfy(\.isEmpty), "then gone")
    }
}
