import Foundation
import VelvetKernels

/// Separable Gaussian blur: a horizontal then a vertical pass of `gaussian_blur.comp`
/// through a float intermediate, so rounding happens once, at the end.
/// Borders are replicated; weights are exp(-i^2 / 2 sigma^2) for |i| <= radius, normalised.
/// Sigma only changes push constants, so one blur object serves every sigma (a stage whose
/// sigma follows the face size must not build a pipeline per value).
public final class GaussianBlur: @unchecked Sendable {
    public static let maxSigma: Float = 32

    /// The sigma `record(on:source:destination:scratch:)` uses.
    public let sigma: Float
    private let kernel: TypedKernel<KernelLibrary.GaussianBlurPush>

    public init(context: GPUContext, sigma: Float = 1) throws {
        try Self.check(sigma)
        self.sigma = sigma
        kernel = try TypedKernel(context: context)
    }

    private static func check(_ sigma: Float) throws {
        guard sigma >= 0, sigma <= Self.maxSigma else {
            throw GPUError.invalidArgument("blur sigma \(sigma) outside 0...\(Self.maxSigma)")
        }
    }

    /// ceil(3 sigma); below sigma 0.25 a neighbour's weight is under 1e-3 of the centre's
    /// (and the recurrence would underflow), so such a blur is a copy.
    public static func radius(forSigma sigma: Double) -> Int { sigma < 0.25 ? 0 : Int((3 * sigma).rounded(.up)) }

    /// The kernel's weight recurrence: start value, first ratio, ratio step, normaliser.
    static func recurrence(sigma: Double) -> (firstWeight: Double, firstRatio: Double, q: Double, normaliser: Double) {
        let radius = Double(radius(forSigma: sigma))
        guard radius > 0 else { return (1, 1, 1, 1) }
        let twoSigmaSquared = 2 * sigma * sigma
        let raw = (0...Int(radius)).map { exp(-Double($0 * $0) / twoSigmaSquared) }
        let total = raw[0] + 2 * raw.dropFirst().reduce(0, +)
        return (exp(-radius * radius / twoSigmaSquared), exp((2 * radius - 1) / twoSigmaSquared),
                exp(-2 / twoSigmaSquared), 1 / total)
    }

    /// Records the blur of `source` into `destination` (same size), using `scratch`
    /// (same size, rgba16f or rgba32f) between the passes.
    public func record(on recorder: CommandRecorder, source: GPUImage, destination: GPUImage, scratch: GPUImage) throws {
        try record(on: recorder, source: source, destination: destination, scratch: scratch, sigma: sigma)
    }

    /// The same with any sigma in 0...maxSigma.
    public func record(on recorder: CommandRecorder, source: GPUImage, destination: GPUImage, scratch: GPUImage,
                       sigma: Float) throws {
        try Self.check(sigma)
        guard source.width == destination.width, source.height == destination.height,
              scratch.width == source.width, scratch.height == source.height else {
            throw GPUError.invalidArgument("blur images differ in size")
        }
        let radius = Self.radius(forSigma: Double(sigma))
        let recurrence = Self.recurrence(sigma: Double(sigma))
        for (input, output, vertical) in [(source, scratch, false), (scratch, destination, true)] {
            let push = KernelLibrary.GaussianBlurPush(
                size: SIMD2(Int32(source.width), Int32(source.height)), radius: Int32(radius), vertical: vertical ? 1 : 0,
                firstWeight: Float(recurrence.firstWeight), firstRatio: Float(recurrence.firstRatio),
                q: Float(recurrence.q), normaliser: Float(recurrence.normaliser))
            let length = vertical ? source.height : source.width
            let lines = vertical ? source.width : source.height
            let runs = (length + Self.run - 1) / Self.run
            recorder.dispatch(kernel, [.sampledImage(input, .nearest), .storageImage(output)],
                              push: push, groups: ((lines + 63) / 64, runs, 1))
        }
    }

    /// Outputs per invocation; matches RUN in gaussian_blur.comp.
    static let run = 16
}
