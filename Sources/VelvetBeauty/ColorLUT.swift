import Foundation

/// A 3D colour lookup table: `size`^3 output colours for inputs on a regular grid over
/// [domainMin, domainMax], red varying fastest (the .cube order).
public struct ColorLUT: Sendable, Equatable {
    public static let maxSize = 65

    public var title: String
    public var size: Int
    public var domainMin: SIMD3<Float>
    public var domainMax: SIMD3<Float>
    public var entries: [SIMD3<Float>]

    public init(title: String = "", size: Int, domainMin: SIMD3<Float> = .zero, domainMax: SIMD3<Float> = .one,
                entries: [SIMD3<Float>]) {
        (self.title, self.size, self.domainMin, self.domainMax, self.entries) = (title, size, domainMin, domainMax, entries)
    }

    /// The table that changes nothing.
    public static func identity(size: Int) -> ColorLUT {
        ColorLUT(size: size, entries: grid(size: size).map { $0 })
    }

    /// A table made by evaluating `transform` at every grid point (0...1 inputs).
    public static func generated(title: String, size: Int, _ transform: (SIMD3<Float>) -> SIMD3<Float>) -> ColorLUT {
        ColorLUT(title: title, size: size, entries: grid(size: size).map(transform))
    }

    static func grid(size: Int) -> [SIMD3<Float>] {
        let scale = 1 / Float(size - 1)
        var points: [SIMD3<Float>] = []
        points.reserveCapacity(size * size * size)
        for b in 0..<size { for g in 0..<size { for r in 0..<size {
            points.append(SIMD3(Float(r), Float(g), Float(b)) * scale)
        } } }
        return points
    }

    /// A 512x512 "lookup" image (GPUPixel's format: 8x8 tiles of 64x64; tile index = blue,
    /// x in a tile = red, y = green), given as 0...1 RGB values, row by row.
    public static func fromLookupImage(_ rgb: [SIMD3<Float>], width: Int, height: Int, path: String) throws -> ColorLUT {
        guard width == 512, height == 512, rgb.count == width * height else {
            throw LUTError(path: path, line: nil, reason: "a lookup-image LUT must be 512x512 (8x8 tiles of 64x64), got \(width)x\(height)")
        }
        var entries: [SIMD3<Float>] = []
        entries.reserveCapacity(64 * 64 * 64)
        for blue in 0..<64 {
            let tileX = (blue % 8) * 64, tileY = (blue / 8) * 64
            for green in 0..<64 { for red in 0..<64 { entries.append(rgb[(tileY + green) * width + tileX + red]) } }
        }
        return ColorLUT(title: URL(fileURLWithPath: path).lastPathComponent, size: 64, entries: entries)
    }

    /// Trilinear lookup on the CPU (the reference the GPU kernel is tested against).
    public func apply(_ colour: SIMD3<Float>) -> SIMD3<Float> {
        let span = domainMax - domainMin
        let unit = simd_clamp((colour - domainMin) / span, .zero, .one) * Float(size - 1)
        let lower = SIMD3<Int>(Int(unit.x.rounded(.down)), Int(unit.y.rounded(.down)), Int(unit.z.rounded(.down)))
        let upper = SIMD3<Int>(min(lower.x + 1, size - 1), min(lower.y + 1, size - 1), min(lower.z + 1, size - 1))
        let t = unit - SIMD3<Float>(Float(lower.x), Float(lower.y), Float(lower.z))
        func at(_ r: Int, _ g: Int, _ b: Int) -> SIMD3<Float> { entries[(b * size + g) * size + r] }
        func mixed(_ a: SIMD3<Float>, _ b: SIMD3<Float>, _ t: Float) -> SIMD3<Float> { a + (b - a) * t }
        let c00 = mixed(at(lower.x, lower.y, lower.z), at(upper.x, lower.y, lower.z), t.x)
        let c10 = mixed(at(lower.x, upper.y, lower.z), at(upper.x, upper.y, lower.z), t.x)
        let c01 = mixed(at(lower.x, lower.y, upper.z), at(upper.x, lower.y, upper.z), t.x)
        let c11 = mixed(at(lower.x, upper.y, upper.z), at(upper.x, upper.y, upper.z), t.x)
        return mixed(mixed(c00, c10, t.y), mixed(c01, c11, t.y), t.z)
    }
}

private func simd_clamp(_ value: SIMD3<Float>, _ low: SIMD3<Float>, _ high: SIMD3<Float>) -> SIMD3<Float> {
    value.replacing(with: low, where: value .< low).replacing(with: high, where: value .> high)
}

/// A LUT file that cannot be used, with the file (and line) to look at.
public struct LUTError: Error, CustomStringConvertible, Equatable {
    public let path: String
    public let line: Int?
    public let reason: String
    public init(path: String, line: Int?, reason: String) { (self.path, self.line, self.reason) = (path, line, reason) }
    public var description: String { line.map { "\(path):\($0): \(reason)" } ?? "\(path): \(reason)" }
}
