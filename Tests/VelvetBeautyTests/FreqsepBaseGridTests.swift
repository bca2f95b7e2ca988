import Foundation
import VelvetGPU
import VelvetMedia
import VelvetTestSupport
import XCTest
@testable import VelvetBeauty

/// Frequency separation's low layer B on a coarse grid, for a face whose B is 2.5 px wide or
/// more (`FrequencySeparation.gridFactor`): the output stays within a level of the exact
/// separable FIR's, on a real photo's skin, through a mask with a hard-edged hole of another
/// colour, over a region that reaches the frame's edges.
final class FreqsepBaseGridTests: GPUTestCase {
    func testTheGridGivesWhatTheExactLowLayerGivesWithinALevel() throws {
        let context = try self.context
        let photo = try ImageLoader.load(TrackedPhoto.path("grace_hopper.jpg"), context: context)
        let width = photo.width, height = photo.height
        let (mask, weights) = try Self.maskWithHole(context: context, width: width, height: height)
        let region = PixelRegion(x: 0, y: 0, width: width, height: height)
        let settings = BeautySettings()
        let pool = ImagePool(context: context)
        let separation = try FrequencySeparation(context: context, pool: pool, blurs: BlurCache(context: context))
        for faceSize: Float in [800, 1600] {
            let factor = FrequencySeparation.gridFactor(sigma: settings.baseSigma * faceSize)
            XCTAssertGreaterThan(factor, 1, "face size \(faceSize) puts B on a grid")
            func render(onGrid: Bool) throws -> [Float] {
                separation.basesOnGrid = onGrid
                let output = try GPUImage(context: context, width: width, height: height, format: .rgba32f)
                let recorder = try CommandRecorder(context: context)
                try separation.record(on: recorder, source: photo, mask: mask, destination: output, region: region,
                                      faceSize: faceSize, settings: settings)
                let readback = try recorder.download(output)
                try recorder.submit().wait()
                return Array(readback.raw.bindMemory(to: Float.self))
            }
            let grid = try render(onGrid: true), exact = try render(onGrid: false)
            let source = try TrackedPhoto.download(photo)
            var worst: Float = 0, differenceSum: Float = 0, changeSum: Float = 0, count = 0
            for pixel in 0..<(width * height) {
                for channel in 0..<3 {
                    let i = pixel * 4 + channel
                    // What reaches the output: the blend weighs the smoothing by the mask, faded
                    // in from the frame's edge over the smoothing's reach (beauty_blend.comp).
                    let weight = weights[pixel] * Self.edgeFade(x: pixel % width, y: pixel / width, width: width, height: height,
                                                               reach: settings.smoothingReach * faceSize)
                    worst = max(worst, weight * abs(grid[i] - exact[i]))
                    differenceSum += weight * abs(grid[i] - exact[i])
                    changeSum += weight * abs(exact[i] - source.pixels[pixel][channel])
                    count += 1
                }
            }
            let meanDifference = differenceSum / Float(count), meanChange = changeSum / Float(count)
            // The smoothing moves the skin by levels (measured: 10.5 and 10.9 on average), so the
            // comparison is not between two copies of the input; the grid leaves the result within
            // a level (measured: at most 0.29 and 0.87, 0.025 and 0.048 on average).
            XCTAssertGreaterThan(meanChange, 2 / 255, "face size \(faceSize): the exact path's mean change")
            XCTAssertLessThan(worst, 1 / 255, "face size \(faceSize): the largest difference, grid against exact")
            XCTAssertLessThan(meanDifference, 0.1 / 255, "face size \(faceSize): the mean difference, grid against exact")
        }
    }

    /// smoothstep(0, reach, the pixel centre's distance to the frame's edge).
    private static func edgeFade(x: Int, y: Int, width: Int, height: Int, reach: Float) -> Float {
        let px = Float(x) + 0.5, py = Float(y) + 0.5
        let edge = min(min(px, py), min(Float(width) - px, Float(height) - py))
        let t = min(1, max(0, edge / reach))
        return t * t * (3 - 2 * t)
    }

    /// Its weights, and skin weight 1 in an ellipse that fades over 8 px, with a hole (weight 0, hard edge) over
    /// the left eye's area: the normalised convolution must keep the hole's colours out.
    private static func maskWithHole(context: GPUContext, width: Int, height: Int) throws -> (GPUImage, [Float]) {
        var values = [Float](repeating: 0, count: width * height * 4)
        let centre = SIMD2<Float>(Float(width) / 2, Float(height) * 0.45)
        let radii = SIMD2<Float>(Float(width) * 0.45, Float(height) * 0.45)
        let hole = SIMD2<Float>(Float(width) * 0.4, Float(height) * 0.35)
        for y in 0..<height {
            for x in 0..<width {
                let p = SIMD2<Float>(Float(x) + 0.5, Float(y) + 0.5)
                let d = (p - centre) / radii
                let outside = (d * d).sum().squareRoot() - 1
                var weight = min(1, max(0, -outside * radii.min() / 8))
                if ((p - hole) * (p - hole)).sum() < 30 * 30 { weight = 0 }
                values[(y * width + x) * 4] = weight
            }
        }
        let image = try GPUImage(context: context, width: width, height: height, format: .rgba32f)
        let recorder = try CommandRecorder(context: context)
        try values.withUnsafeBytes { try recorder.upload($0, to: image) }
        try recorder.submit().wait()
        return (image, stride(from: 0, to: values.count, by: 4).map { values[$0] })
    }
}
