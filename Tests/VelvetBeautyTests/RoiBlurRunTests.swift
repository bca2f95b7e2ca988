import Foundation
import VelvetGPU
import VelvetKernels
import VelvetTestSupport
import XCTest

/// Frequency separation's base blur (`beauty_roi_blur.comp`) computes RUN outputs per
/// invocation on CPU devices, sliding a window of texels along the taps: the result must be
/// the one-output-per-invocation result to the bit, on both axes, for a region whose size is
/// no multiple of the run, and it must be the Gaussian (not the same wrong thing both ways).
final class RoiBlurRunTests: GPUTestCase {
    static let width = 53, height = 41
    static let region = (x: 5, y: 3, width: 37, height: 29)

    func testARunOfOutputsGivesWhatOneOutputPerInvocationGives() throws {
        let width = Self.width, height = Self.height, region = Self.region
        var pixels = [Float](repeating: 0, count: width * height * 4)
        for i in pixels.indices { pixels[i] = Float((i * 7919 + 13) % 1009) / 1009 }
        let radius = 6, sigma: Float = 2.3
        for vertical in [false, true] {
            let one = try blurred(pixels, vertical: vertical, radius: radius, sigma: sigma, run: 1)
            let reference = Self.reference(pixels, vertical: vertical, radius: radius, sigma: sigma)
            for run in [3, 8] {
                let many = try blurred(pixels, vertical: vertical, radius: radius, sigma: sigma, run: run)
                XCTAssertEqual(zip(many, one).filter { $0.bitPattern != $1.bitPattern }.count, 0,
                               "floats that differ with a run of \(run), vertical \(vertical)")
            }
            var worst: Float = 0, touchedOutside = 0
            for y in 0..<height {
                for x in 0..<width {
                    let inside = x >= region.x && x < region.x + region.width && y >= region.y && y < region.y + region.height
                    for c in 0..<4 {
                        let i = (y * width + x) * 4 + c
                        if inside { worst = max(worst, abs(one[i] - reference[i])) } else if one[i] != -1 { touchedOutside += 1 }
                    }
                }
            }
            XCTAssertLessThan(worst, 1e-5, "the blur against a CPU Gaussian, vertical \(vertical)")
            XCTAssertEqual(touchedOutside, 0, "pixels written outside the region, vertical \(vertical)")
        }
    }

    private func blurred(_ pixels: [Float], vertical: Bool, radius: Int, sigma: Float, run: Int) throws -> [Float] {
        let width = Self.width, height = Self.height, region = Self.region
        let source = try GPUImage(context: context, width: width, height: height, format: .rgba32f)
        let destination = try GPUImage(context: context, width: width, height: height, format: .rgba32f)
        let kernel = try TypedKernel<KernelLibrary.BeautyRoiBlurPush>(context: context, specialization: ["RUN": .int(Int32(run))])
        let factor = -1 / (2 * sigma * sigma)
        let total = (-radius...radius).map { exp(Float($0 * $0) * factor) }.reduce(0, +)
        let push = KernelLibrary.BeautyRoiBlurPush(
            origin: SIMD2(Int32(region.x), Int32(region.y)), size: SIMD2(Int32(region.width), Int32(region.height)),
            vertical: vertical ? 1 : 0, radius: Int32(radius), factor: factor, normaliser: 1 / total)
        let recorder = try CommandRecorder(context: context)
        try pixels.withUnsafeBytes { try recorder.upload($0, to: source) }
        try [Float](repeating: -1, count: width * height * 4).withUnsafeBytes { try recorder.upload($0, to: destination) }
        recorder.dispatch(kernel, [.sampledImage(source, .nearest), .storageImage(destination)], push: push,
                          covering: vertical ? region.width : (region.width + run - 1) / run,
                          vertical ? (region.height + run - 1) / run : region.height)
        let readback = try recorder.download(destination)
        try recorder.submit().wait()
        return Array(readback.raw.bindMemory(to: Float.self))
    }

    /// The normalised Gaussian along one axis, edges clamped, inside the region.
    private static func reference(_ pixels: [Float], vertical: Bool, radius: Int, sigma: Float) -> [Float] {
        var out = [Float](repeating: -1, count: pixels.count)
        let weights = (-radius...radius).map { exp(-Float($0 * $0) / (2 * sigma * sigma)) }
        let total = weights.reduce(0, +)
        for y in region.y..<(region.y + region.height) {
            for x in region.x..<(region.x + region.width) {
                for c in 0..<4 {
                    var sum: Float = 0
                    for d in -radius...radius {
                        let qx = vertical ? x : min(max(x + d, 0), width - 1), qy = vertical ? min(max(y + d, 0), height - 1) : y
                        sum += weights[d + radius] * pixels[(qy * width + qx) * 4 + c]
                    }
                    out[(y * width + x) * 4 + c] = sum / total
                }
            }
        }
        return out
    }
}
