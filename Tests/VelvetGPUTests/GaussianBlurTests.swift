import Foundation
import VelvetGPU
import VelvetTestSupport
import XCTest

/// The GPU blur against a separable double-precision reference with replicated borders.
final class GaussianBlurTests: GPUTestCase {
    func testRGBA8MatchesReferenceWithinOneLevel() throws {
        for sigma in [0.5, 1, 2.5, 7, 12, 32] as [Float] {
            let error = try maxError(width: 83, height: 61, sigma: sigma, format: .rgba8)
            XCTAssertLessThanOrEqual(error, 1.0 / 255, "sigma \(sigma)")
        }
    }

    func testRGBA16FMatchesReferenceWithinOneThousandth() throws {
        for sigma in [0.5, 1, 2.5, 7, 12, 32] as [Float] {
            let error = try maxError(width: 83, height: 61, sigma: sigma, format: .rgba16f)
            XCTAssertLessThanOrEqual(error, 1e-3, "sigma \(sigma)")
        }
    }

    func testOddSizesAreCoveredExactly() throws {
        for (width, height, sigma) in [(1, 1, 3), (7, 3, 2), (1921, 1079, 0.8)] as [(Int, Int, Float)] {
            let error = try maxError(width: width, height: height, sigma: sigma, format: .rgba8)
            XCTAssertLessThanOrEqual(error, 1.0 / 255, "\(width)x\(height)")
        }
    }

    func testSigmaOutsideRangeIsAnError() throws {
        XCTAssertThrowsError(try GaussianBlur(context: context, sigma: 33))
        XCTAssertThrowsError(try GaussianBlur(context: context, sigma: -1))
    }

    /// Blurs a noisy image with hard edges on the GPU and returns the largest channel error.
    private func maxError(width: Int, height: Int, sigma: Float, format: PixelFormat) throws -> Double {
        var random = SeededGenerator(state: UInt64(width * 7919 + height * 31) ^ UInt64(sigma * 1000))
        let values: [Double] = (0..<(width * height * 4)).map { index in
            let x = (index / 4) % width, y = (index / 4) / width
            let edge = (x > width / 3) != (y > height / 2) ? 0.75 : 0.1
            let noise = Double.random(in: -0.1...0.1, using: &random)
            let value = min(max(edge + noise, 0), 1)
            // The reference starts from exactly what the GPU receives.
            return format == .rgba8 ? (value * 255).rounded() / 255 : Double(Float(Float16(Float(value))))
        }
        let source = try GPUImage(context: context, width: width, height: height, format: format)
        let scratch = try GPUImage(context: context, width: width, height: height, format: .rgba16f)
        let destination = try GPUImage(context: context, width: width, height: height, format: format)
        let blur = try GaussianBlur(context: context, sigma: sigma)
        let recorder = try CommandRecorder(context: context)
        try encode(values, format).withUnsafeBytes { try recorder.upload($0, to: source) }
        try blur.record(on: recorder, source: source, destination: destination, scratch: scratch)
        let readback = try recorder.download(destination)
        try recorder.submit().wait()

        let output = decode(readback.bytes, format)
        let expected = Self.reference(values, width: width, height: height, sigma: Double(sigma))
        return zip(output, expected).map { abs($0 - $1) }.max() ?? 0
    }

    private func encode(_ values: [Double], _ format: PixelFormat) -> [UInt8] {
        switch format {
        case .rgba8: return values.map { UInt8(($0 * 255).rounded()) }
        default: return values.flatMap { withUnsafeBytes(of: Float16(Float($0)).bitPattern.littleEndian, Array.init) }
        }
    }

    private func decode(_ bytes: [UInt8], _ format: PixelFormat) -> [Double] {
        switch format {
        case .rgba8: return bytes.map { Double($0) / 255 }
        default:
            return stride(from: 0, to: bytes.count, by: 2).map {
                Double(Float(Float16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)))
            }
        }
    }

    /// Separable Gaussian in double precision, radius ceil(3 sigma), border replicated.
    static func reference(_ input: [Double], width: Int, height: Int, sigma: Double) -> [Double] {
        let radius = sigma < 0.25 ? 0 : Int((3 * sigma).rounded(.up))
        let raw = (0...radius).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let total = raw[0] + 2 * raw.dropFirst().reduce(0, +)
        let weights = raw.map { $0 / total }
        func pass(_ image: [Double], horizontal: Bool) -> [Double] {
            var output = [Double](repeating: 0, count: image.count)
            image.withUnsafeBufferPointer { source in
                output.withUnsafeMutableBufferPointer { destination in
                    for y in 0..<height {
                        for x in 0..<width {
                            for channel in 0..<4 {
                                var sum = 0.0
                                for offset in -radius...radius {
                                    let sx = horizontal ? min(max(x + offset, 0), width - 1) : x
                                    let sy = horizontal ? y : min(max(y + offset, 0), height - 1)
                                    sum += weights[abs(offset)] * source[(sy * width + sx) * 4 + channel]
                                }
                                destination[(y * width + x) * 4 + channel] = sum
                            }
                        }
                    }
                }
            }
            return output
        }
        return pass(pass(input, horizontal: true), horizontal: false)
    }
}
