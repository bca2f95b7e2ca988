import VelvetGPU

/// A tensor on the GPU: where it lives and how its floats are laid out.
///
/// - `packedNHWC4`: the layout every VelvetNN kernel reads and writes. A tensor of
///   shape [1, H, W, C] (or [1, N, C] as H = 1, W = N; or [1, C] / [C] as 1x1) is
///   H*W*ceil(C/4) vec4s, pixel-major; channels 4k..4k+3 share a vec4 and the lanes
///   past C are zero. Model inputs use it.
/// - `dense`: TFLite's own row-major float32 layout. Model outputs use it, so a later
///   kernel or the CPU reads them without knowing about packing.
public struct NNTensor: @unchecked Sendable {
    public enum Layout: Sendable, Equatable { case packedNHWC4, dense }

    /// The graph's name for the tensor.
    public let name: String
    public let buffer: GPUBuffer
    /// Start of the tensor in `buffer`, in bytes.
    public let byteOffset: Int
    public let shape: [Int]
    public let layout: Layout

    public var elementCount: Int { shape.reduce(1, *) }
    /// Bytes the tensor occupies in its layout.
    public var byteCount: Int {
        layout == .dense ? elementCount * 4 : NNTensorGeometry(shape: shape).vec4Count * 16
    }
}

/// A tensor viewed as [H, W, C] with batch 1, plus its packed size.
struct NNTensorGeometry: Equatable {
    let height: Int
    let width: Int
    let channels: Int

    var groups: Int { (channels + 3) / 4 }
    var pixels: Int { height * width }
    var vec4Count: Int { pixels * groups }

    init(height: Int, width: Int, channels: Int) {
        self.height = height
        self.width = width
        self.channels = channels
    }

    /// Rank 1-4 shapes with a leading batch of 1 (rank 1 is a plain channel vector).
    init(shape: [Int]) {
        switch shape.count {
        case 4: self.init(height: shape[1], width: shape[2], channels: shape[3])
        case 3: self.init(height: 1, width: shape[1], channels: shape[2])
        case 2: self.init(height: 1, width: 1, channels: shape[1])
        case 1: self.init(height: 1, width: 1, channels: shape[0])
        default: self.init(height: 1, width: 1, channels: shape.reduce(1, *))
        }
    }

    /// Whether `shape` can be viewed this way: batch 1, rank 1...4, no empty axis.
    static func isSupported(_ shape: [Int]) -> Bool {
        guard (1...4).contains(shape.count), shape.allSatisfy({ $0 > 0 }) else { return false }
        return shape.count == 1 || shape[0] == 1
    }

    /// Dense NHWC floats -> packed NHWC4 floats (4 per vec4).
    func pack(_ dense: [Float]) -> [Float] {
        var packed = [Float](repeating: 0, count: vec4Count * 4)
        for pixel in 0..<pixels {
            for c in 0..<channels {
                packed[pixel * groups * 4 + c] = dense[pixel * channels + c]
            }
        }
        return packed
    }

    /// Packed NHWC4 floats -> dense NHWC floats.
    func unpack(_ packed: [Float]) -> [Float] {
        var dense = [Float](repeating: 0, count: pixels * channels)
        for pixel in 0..<pixels {
            for c in 0..<channels {
                dense[pixel * channels + c] = packed[pixel * groups * 4 + c]
            }
        }
        return dense
    }
}
