import Foundation
import VelvetGPU
import XCTest

/// Shared by every test target. Base for GPU tests: one shared context with the Khronos validation layer always on
/// (whatever VELVET_VALIDATION says), and a test fails if the layer reported anything.
open class GPUTestCase: XCTestCase {
    nonisolated(unsafe) private static var sharedContext: GPUContext?

    public var context: GPUContext {
        get throws {
            if let context = Self.sharedContext { return context }
            let context = try GPUContext(request: ProcessInfo.processInfo.environment["VELVET_DEVICE"], validation: true)
            Self.sharedContext = context
            return context
        }
    }

    override open func setUpWithError() throws {
        _ = try context.validationLog?.drain()
    }

    override open func tearDownWithError() throws {
        let messages = try context.validationLog?.drain() ?? []
        XCTAssert(messages.isEmpty, "validation layer reported:\n" + messages.joined(separator: "\n"))
    }
}

/// Deterministic pseudo-random bytes (SplitMix64), so failures reproduce.
public struct SeededGenerator: RandomNumberGenerator {
    public var state: UInt64
    public init(state: UInt64) { self.state = state }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform double in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// RGBA8 pixels with fresh Gaussian noise of `sigma` levels on R, G and B (Box-Muller).
    public mutating func addingNoise(to rgba: [UInt8], sigma: Double) -> [UInt8] {
        rgba.enumerated().map { index, value in
            guard index % 4 != 3 else { return value }
            let u = max(unit(), 1e-12), v = unit()
            let n = sigma * (-2 * log(u)).squareRoot() * cos(2 * Double.pi * v)
            return UInt8(clamping: Int((Double(value) + n).rounded()))
        }
    }
}
