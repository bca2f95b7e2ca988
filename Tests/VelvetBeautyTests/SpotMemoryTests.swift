import Foundation
import VelvetFace
import VelvetGPU
import VelvetTestSupport
import XCTest
@testable import VelvetBeauty

/// Spot removal over the frames of a video (issue 17): a tracked face's fill weights are
/// averaged over frames through its motion (`SpotMemory`, `beauty_spots.comp`), so faint spots
/// under fresh noise do not come and go, a repeated frame repeats exactly, and a spot's fill
/// moves with the face.
final class SpotMemoryTests: GPUTestCase {
    /// Astronaut with dots painted on the cheeks and chin (~3 px on a 103 px face, a quarter
    /// darker: faint enough after the detector's disc mean that noise of 4 levels moves them
    /// over and under the threshold); their pixels.
    private func paintedFace(darkening: Float = 0.75) throws -> (fixture: FaceFixture, rgba: [UInt8], spots: [[Int]]) {
        let fixture = try FaceFixture.load("astronaut")
        let face = fixture.faces[0]
        var painted = fixture.rgba
        let centres = [face.landmarks[MeshRegion.cheekCentres.right] + SIMD2(0, 6), face.landmarks[MeshRegion.cheekCentres.left] + SIMD2(0, 6),
                       (face.landmarks[18] + face.landmarks[152]) / 2, face.landmarks[MeshRegion.cheekCentres.right] + SIMD2(-6, -2)]
        let spots = centres.map { centre -> [Int] in
            var touched: [Int] = []
            for y in Int(centre.y - 4)...Int(centre.y + 4) {
                for x in Int(centre.x - 4)...Int(centre.x + 4) {
                    let d = SIMD2(Float(x) + 0.5, Float(y) + 0.5) - centre
                    guard (d * d).sum() <= 1.6 * 1.6 else { continue }
                    let i = (y * fixture.width + x) * 4
                    for c in 0..<3 { painted[i + c] = UInt8(Float(painted[i + c]) * darkening) }
                    touched.append(y * fixture.width + x)
                }
            }
            return touched
        }
        return (fixture, painted, spots)
    }

    /// Frame-to-frame change of the output at `pixels` (mean over RGB and frames), and the
    /// share of pixel-frames whose fill turns on or off (over 2 levels, then under 0.5 or back).
    private func flicker(_ outputs: [[UInt8]], inputs: [[UInt8]], at pixels: [Int]) -> (change: Double, flips: Double) {
        var change = 0.0, flips = 0
        for frame in 1..<outputs.count {
            for pixel in pixels {
                var fills: [Double] = []
                for (o, i) in [(outputs[frame - 1], inputs[frame - 1]), (outputs[frame], inputs[frame])] {
                    fills.append((0..<3).map { abs(Double(o[4 * pixel + $0]) - Double(i[4 * pixel + $0])) }.max()!)
                }
                for c in 0..<3 { change += abs(Double(outputs[frame][4 * pixel + c]) - Double(outputs[frame - 1][4 * pixel + c])) }
                if (fills[0] > 2 && fills[1] < 0.5) || (fills[0] < 0.5 && fills[1] > 2) { flips += 1 }
            }
        }
        let samples = Double(pixels.count * (outputs.count - 1))
        return (change / (3 * samples), Double(flips) / samples)
    }

    /// Fresh noise each frame on a still face: with the face tracked (the memory on) the spots'
    /// fills turn on and off far less often, and the output there changes less from frame to
    /// frame than with each frame decided alone (an untracked face, as before).
    func testFaintSpotsUnderNoiseDoNotComeAndGo() throws {
        let (fixture, painted, spots) = try paintedFace()
        let face = fixture.faces[0]
        let tracked = try BeautyFace(landmarks: face.landmarks, track: 1)
        var generator = SeededGenerator(state: 17)
        let inputs = (0..<12).map { _ in generator.addingNoise(to: painted, sigma: 4) }
        var results: [Bool: [[UInt8]]] = [:]
        for remembers in [false, true] {
            let pipeline = try SkinPipeline(context: context)
            results[remembers] = try inputs.map { input in
                try PipelineRunner.run(context: context, pipeline: pipeline, rgba: input, width: fixture.width, height: fixture.height,
                                       faces: [remembers ? tracked : face], personMask: fixture.personMask, settings: .spotsAlone).output
            }
        }
        let pixels = spots.flatMap { $0 }
        let alone = flicker(results[false]!, inputs: inputs, at: pixels), remembered = flicker(results[true]!, inputs: inputs, at: pixels)
        let input = flicker(inputs, inputs: inputs, at: pixels)
        print(String(format: "[spot-memory] at the spots: input change %.2f; each frame alone %.2f (flips %.3f); remembered %.2f (flips %.3f)",
                     input.change, alone.change, alone.flips, remembered.change, remembered.flips))
        XCTAssertGreaterThan(alone.flips, 0.02, "the faint spots come and go when each frame decides alone")
        XCTAssertLessThanOrEqual(remembered.flips, 0.5 * alone.flips, "remembered, they come and go at most half as often")
        XCTAssertLessThan(remembered.change, alone.change, "and the output there changes less from frame to frame")
        // The first frame of a track is the frame decided alone (a still renders as before).
        XCTAssertEqual(results[true]![0], results[false]![0])
    }

    /// A repeated frame renders exactly as the frame before (M15a), after frames that moved
    /// the memory.
    func testARepeatedFrameRepeatsItsFills() throws {
        let (fixture, painted, _) = try paintedFace()
        let tracked = try BeautyFace(landmarks: fixture.faces[0].landmarks, track: 3)
        var generator = SeededGenerator(state: 5)
        let frames = (0..<3).map { _ in generator.addingNoise(to: painted, sigma: 4) }
        let pipeline = try SkinPipeline(context: context)
        let outputs = try (frames + [frames[2], frames[2]]).map { input in
            try PipelineRunner.run(context: context, pipeline: pipeline, rgba: input, width: fixture.width, height: fixture.height,
                                   faces: [tracked], personMask: fixture.personMask, settings: .spotsAlone).output
        }
        XCTAssertNotEqual(outputs[1], outputs[2])
        XCTAssertEqual(outputs[3], outputs[2], "a repeat renders the same")
        XCTAssertEqual(outputs[4], outputs[2])
    }

    /// The face moves 2 px right and 1 px down a frame (picture and mesh): each spot's fill
    /// moves with it. On the last frame every spot is still filled as much as a still of that
    /// frame fills it, within a fifth of the painted darkness, and no fill is left where the
    /// spots were.
    func testAFillMovesWithTheFace() throws {
        let (fixture, painted, spots) = try paintedFace()
        let (width, height) = (fixture.width, fixture.height)
        let step = (x: 2, y: 1), frames = 6
        func shifted(_ rgba: [UInt8], by k: Int) -> [UInt8] {
            var out = rgba
            for y in 0..<height {
                for x in 0..<width {
                    let sx = min(max(x - k * step.x, 0), width - 1), sy = min(max(y - k * step.y, 0), height - 1)
                    for c in 0..<4 { out[(y * width + x) * 4 + c] = rgba[(sy * width + sx) * 4 + c] }
                }
            }
            return out
        }
        func face(_ k: Int, track: Int?) throws -> BeautyFace {
            try BeautyFace(landmarks: fixture.faces[0].landmarks.map { $0 + SIMD2(Float(k * step.x), Float(k * step.y)) }, track: track)
        }
        let pipeline = try SkinPipeline(context: context)
        var last: [UInt8] = []
        for k in 0..<frames {
            last = try PipelineRunner.run(context: context, pipeline: pipeline, rgba: shifted(painted, by: k), width: width, height: height,
                                          faces: [face(k, track: 9)], personMask: nil, settings: .spotsAlone).output
        }
        let input = shifted(painted, by: frames - 1)
        let still = try PipelineRunner.run(context: context, rgba: input, width: width, height: height,
                                           faces: [face(frames - 1, track: nil)], personMask: nil, settings: .spotsAlone).output
        let clean = shifted(fixture.rgba, by: frames - 1)
        func luma(_ bytes: [UInt8], _ pixels: [Int]) -> Float {
            pixels.map { i in 0.2126 * Float(bytes[4 * i]) + 0.7152 * Float(bytes[4 * i + 1]) + 0.0722 * Float(bytes[4 * i + 2]) }
                .reduce(0, +) / Float(pixels.count)
        }
        let offset = (frames - 1) * (step.y * width + step.x)
        for (index, spot) in spots.enumerated() {
            let moved = spot.map { $0 + offset }
            let darkness = luma(clean, moved) - luma(input, moved)
            let leftMoving = luma(clean, moved) - luma(last, moved), leftStill = luma(clean, moved) - luma(still, moved)
            print(String(format: "[spot-memory] moving spot %d: painted %.1f darker, %.1f left (a still of the frame: %.1f)",
                         index, darkness, leftMoving, leftStill))
            XCTAssertLessThanOrEqual(abs(leftMoving - leftStill), 0.2 * darkness, "spot \(index) is filled where it now is")
            // Where the spot was at first (and is not now), the output is the input.
            let vacated = spot.filter { !moved.contains($0) }
            XCTAssertLessThan(abs(luma(last, vacated) - luma(input, vacated)), 1, "spot \(index): no fill left behind")
        }
    }
}
