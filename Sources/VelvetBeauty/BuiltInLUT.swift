import Foundation

/// Velvet's own colour grades, defined here by formula (nothing copied from elsewhere).
/// `velvet luts export DIR` (Tools/make-luts.sh) writes them as .cube files for editors.
public enum BuiltInLUT: String, CaseIterable, Sendable {
    /// Lifts mid-tones a little, keeps black and white where they are.
    case gentleBrighten = "gentle-brighten"
    /// Warmer skin: a touch more red, a touch less blue, in the mid-tones.
    case warm
    /// Cooler, slightly desaturated.
    case cool
    /// Softer contrast with a lifted black (a matte look).
    case softMatte = "soft-matte"

    public static let size = 33

    public var lut: ColorLUT {
        ColorLUT.generated(title: "Velvet \(rawValue)", size: Self.size, transform)
    }

    private func transform(_ c: SIMD3<Float>) -> SIMD3<Float> {
        func clamp(_ v: SIMD3<Float>) -> SIMD3<Float> { v.replacing(with: 0, where: v .< 0).replacing(with: 1, where: v .> 1) }
        // Mid-tone weight: 0 at black and white, 1 at mid grey.
        func midtone(_ v: Float) -> Float { 4 * v * (1 - v) }
        switch self {
        case .gentleBrighten:
            return clamp(SIMD3(c.x + 0.06 * midtone(c.x), c.y + 0.06 * midtone(c.y), c.z + 0.06 * midtone(c.z)))
        case .warm:
            return clamp(SIMD3(c.x + 0.05 * midtone(c.x), c.y + 0.01 * midtone(c.y), c.z - 0.05 * midtone(c.z)))
        case .cool:
            let luma = 0.2126 * c.x + 0.7152 * c.y + 0.0722 * c.z
            let grey = SIMD3<Float>(repeating: luma)
            let muted = grey + (c - grey) * 0.9
            return clamp(SIMD3(muted.x - 0.03 * midtone(muted.x), muted.y, muted.z + 0.04 * midtone(muted.z)))
        case .softMatte:
            return clamp(SIMD3<Float>(repeating: 0.06) + c * 0.88 + SIMD3(midtone(c.x), midtone(c.y), midtone(c.z)) * 0.02)
        }
    }
}

extension ColorLUT {
    /// The table as `.cube` text (red fastest).
    public var cubeText: String {
        var text = "TITLE \"\(title)\"\nLUT_3D_SIZE \(size)\nDOMAIN_MIN \(domainMin.x) \(domainMin.y) \(domainMin.z)\n"
            + "DOMAIN_MAX \(domainMax.x) \(domainMax.y) \(domainMax.z)\n"
        text.reserveCapacity(entries.count * 30)
        for entry in entries { text += String(format: "%.6f %.6f %.6f\n", entry.x, entry.y, entry.z) }
        return text
    }
}
