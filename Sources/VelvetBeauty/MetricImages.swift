import VelvetGPU
import Foundation

/// CPU images for the quality metrics: RGB (non-linear, 0...1) and single planes.
public struct RGBImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public var pixels: [SIMD3<Float>]

    public init(width: Int, height: Int, pixels: [SIMD3<Float>]) {
        precondition(pixels.count == width * height, "pixel count does not match the size")
        (self.width, self.height, self.pixels) = (width, height, pixels)
    }

    /// From tightly packed RGBA8 bytes (alpha ignored).
    public init(rgba8 bytes: [UInt8], width: Int, height: Int) throws {
        guard bytes.count == width * height * 4 else {
            throw BeautyError.invalidImage("expected \(width * height * 4) RGBA8 bytes, got \(bytes.count)")
        }
        var pixels = [SIMD3<Float>](repeating: .zero, count: width * height)
        bytes.withUnsafeBufferPointer { source in
            for i in 0..<(width * height) {
                pixels[i] = SIMD3(Float(source[4 * i]), Float(source[4 * i + 1]), Float(source[4 * i + 2])) / 255
            }
        }
        self.init(width: width, height: height, pixels: pixels)
    }

    /// BT.709 luma Y'.
    public var luma: PlaneImage {
        PlaneImage(width: width, height: height, values: pixels.map { 0.2126 * $0.x + 0.7152 * $0.y + 0.0722 * $0.z })
    }

    /// One channel (0 = r, 1 = g, 2 = b).
    public func channel(_ index: Int) -> PlaneImage {
        PlaneImage(width: width, height: height, values: pixels.map { $0[index] })
    }

    /// The pixels inside `region` (clamped to the image).
    public func cropped(to region: PixelRegion) -> RGBImage {
        var result: [SIMD3<Float>] = []
        result.reserveCapacity(region.width * region.height)
        for y in region.y..<(region.y + region.height) {
            result += pixels[(y * width + region.x)..<(y * width + region.x + region.width)]
        }
        return RGBImage(width: region.width, height: region.height, pixels: result)
    }
}

/// A single-channel float image.
public struct PlaneImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public var values: [Float]

    public init(width: Int, height: Int, values: [Float]) {
        precondition(values.count == width * height, "value count does not match the size")
        (self.width, self.height, self.values) = (width, height, values)
    }

    public subscript(x: Int, y: Int) -> Float { values[y * width + x] }

    /// Bilinear sample at a pixel-centre coordinate (x + 0.5 is the centre of column x), edge clamped.
    public func sample(x: Float, y: Float) -> Float {
        let fx = min(max(x - 0.5, 0), Float(width - 1)), fy = min(max(y - 0.5, 0), Float(height - 1))
        let x0 = Int(fx), y0 = Int(fy)
        let x1 = min(x0 + 1, width - 1), y1 = min(y0 + 1, height - 1)
        let tx = fx - Float(x0), ty = fy - Float(y0)
        let top = self[x0, y0] * (1 - tx) + self[x1, y0] * tx
        let bottom = self[x0, y1] * (1 - tx) + self[x1, y1] * tx
        return top * (1 - ty) + bottom * ty
    }

    public func cropped(to region: PixelRegion) -> PlaneImage {
        var result: [Float] = []
        result.reserveCapacity(region.width * region.height)
        for y in region.y..<(region.y + region.height) {
            result += values[(y * width + region.x)..<(y * width + region.x + region.width)]
        }
        return PlaneImage(width: region.width, height: region.height, values: result)
    }

    /// Separable Gaussian (radius ceil(3 sigma), replicated border); sigma below 0.25 copies.
    public func blurred(sigma: Float) -> PlaneImage {
        guard sigma >= 0.25 else { return self }
        let radius = Int((3 * sigma).rounded(.up))
        var weights = (0...radius).map { d -> Float in
            let x = Float(d) / sigma
            return exp(-0.5 * x * x)
        }
        let total = weights[0] + 2 * weights.dropFirst().reduce(0, +)
        weights = weights.map { $0 / total }
        var horizontal = [Float](repeating: 0, count: values.count)
        var vertical = [Float](repeating: 0, count: values.count)
        let w = width, h = height
        values.withUnsafeBufferPointer { source in
            horizontal.withUnsafeMutableBufferPointer { target in
                for y in 0..<h {
                    let row = y * w
                    for x in 0..<w {
                        var sum = weights[0] * source[row + x]
                        for d in 1...radius {
                            sum += weights[d] * (source[row + max(x - d, 0)] + source[row + min(x + d, w - 1)])
                        }
                        target[row + x] = sum
                    }
                }
            }
        }
        horizontal.withUnsafeBufferPointer { source in
            vertical.withUnsafeMutableBufferPointer { target in
                for y in 0..<h {
                    for x in 0..<w {
                        var sum = weights[0] * source[y * w + x]
                        for d in 1...radius {
                            sum += weights[d] * (source[max(y - d, 0) * w + x] + source[min(y + d, h - 1) * w + x])
                        }
                        target[y * w + x] = sum
                    }
                }
            }
        }
        return PlaneImage(width: w, height: h, values: vertical)
    }

    static func combine(_ a: PlaneImage, _ b: PlaneImage, _ operation: (Float, Float) -> Float) -> PlaneImage {
        PlaneImage(width: a.width, height: a.height, values: zip(a.values, b.values).map(operation))
    }
}
