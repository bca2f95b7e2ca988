import Foundation
import XCTest
@testable import VelvetNN

/// A plain CPU executor for `NNGraph`s in double precision, written from TFLite's
/// operator definitions independently of the GPU kernels (e.g. transposed convolution
/// scatters here where the kernel gathers). The oracle for the GPU tests; its own
/// accuracy is checked against LiteRT's outputs below.
struct NNReference {
    /// A tensor viewed as [H, W, C], dense row-major.
    struct Tensor {
        var height: Int, width: Int, channels: Int
        var data: [Double]

        init(height: Int, width: Int, channels: Int, data: [Double]? = nil) {
            (self.height, self.width, self.channels) = (height, width, channels)
            self.data = data ?? [Double](repeating: 0, count: height * width * channels)
        }

        init(shape: [Int], data: [Double]) {
            let g = NNTensorGeometry(shape: shape)
            self.init(height: g.height, width: g.width, channels: g.channels, data: data)
        }

        subscript(y: Int, x: Int, c: Int) -> Double {
            get { data[(y * width + x) * channels + c] }
            set { data[(y * width + x) * channels + c] = newValue }
        }
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    let graph: NNGraph

    func run(_ inputs: [[Float]]) throws -> [[Double]] {
        var values: [Int: Tensor] = [:]
        for (index, input) in zip(graph.inputs, inputs) {
            values[index] = Tensor(shape: graph.tensors[index].shape, data: input.map(Double.init))
        }
        for node in graph.nodes {
            let out = node.outputs[0]
            values[out] = try evaluate(node, values)
        }
        return try graph.outputs.map { index in
            guard let tensor = values[index] else { throw Failure(description: "output \(index) never computed") }
            return tensor.data
        }
    }

    private func floats(_ index: Int) -> [Double] { graph.constants[index]?.floats?.map(Double.init) ?? [] }
    private func shape(_ index: Int) -> [Int] { graph.tensors[index].shape }

    static func activation(_ x: Double, _ kind: TFLiteActivation) -> Double {
        switch kind {
        case .none, .signBit: return x
        case .relu: return max(x, 0)
        case .relu6: return min(max(x, 0), 6)
        case .reluN1To1: return min(max(x, -1), 1)
        case .tanh: return Foundation.tanh(x)
        }
    }

    static func samePadding(_ input: Int, _ kernel: Int, _ stride: Int, _ padding: TFLitePadding) -> (Int, Int) {
        if padding == .valid { return ((input - kernel) / stride + 1, 0) }
        let output = (input + stride - 1) / stride
        return (output, max((output - 1) * stride + kernel - input, 0) / 2)
    }

    private func evaluate(_ node: NNGraph.Node, _ values: [Int: Tensor]) throws -> Tensor {
        func input(_ slot: Int) throws -> Tensor {
            guard let t = values[node.inputs[slot]] else { throw Failure(description: "\(node.kind) input \(slot) missing") }
            return t
        }
        let outShape = shape(node.outputs[0])
        let target = NNTensorGeometry(shape: outShape)
        var out = Tensor(height: target.height, width: target.width, channels: target.channels)
        switch node.kind {
        case .builtin(.conv2D), .builtin(.depthwiseConv2D):
            let x = try input(0)
            let w = floats(node.inputs[1]), wShape = shape(node.inputs[1])
            let bias = node.inputs.count > 2 && node.inputs[2] >= 0 ? floats(node.inputs[2]) : []
            let depthwise = node.builtin == .depthwiseConv2D
            let (padding, sy, sx, act): (TFLitePadding, Int, Int, TFLiteActivation)
            switch node.options {
            case .conv2D(let o): (padding, sy, sx, act) = (o.padding, o.strideH, o.strideW, o.activation)
            case .depthwiseConv2D(let o): (padding, sy, sx, act) = (o.padding, o.strideH, o.strideW, o.activation)
            default: throw Failure(description: "conv options")
            }
            let kh = wShape[1], kw = wShape[2]
            let (_, top) = Self.samePadding(x.height, kh, sy, padding)
            let (_, left) = Self.samePadding(x.width, kw, sx, padding)
            let inC = x.channels, outC = out.channels
            x.data.withUnsafeBufferPointer { xd in
                w.withUnsafeBufferPointer { wd in
                    out.data.withUnsafeMutableBufferPointer { od in
                        for oy in 0..<out.height {
                            for ox in 0..<out.width {
                                for o in 0..<outC {
                                    var sum = bias.isEmpty ? 0 : bias[o]
                                    for ky in 0..<kh {
                                        let iy = oy * sy - top + ky
                                        if iy < 0 || iy >= x.height { continue }
                                        for kx in 0..<kw {
                                            let ix = ox * sx - left + kx
                                            if ix < 0 || ix >= x.width { continue }
                                            let base = (iy * x.width + ix) * inC
                                            if depthwise {
                                                sum += xd[base + o] * wd[(ky * kw + kx) * outC + o]
                                            } else {
                                                let wBase = ((o * kh + ky) * kw + kx) * inC
                                                for i in 0..<inC { sum += xd[base + i] * wd[wBase + i] }
                                            }
                                        }
                                    }
                                    od[(oy * out.width + ox) * outC + o] = Self.activation(sum, act)
                                }
                            }
                        }
                    }
                }
            }
        case .custom("Convolution2DTransposeBias"):
            // Scatter form: every input pixel adds its kernel footprint to the output.
            let x = try input(0)
            let w = floats(node.inputs[1]), wShape = shape(node.inputs[1]), bias = floats(node.inputs[2])
            let params = try TFLiteTransposeConvParams(rawCustomOptions: node.customOptions ?? [])
            let kh = wShape[1], kw = wShape[2]
            let padTop = params.padding == .same ? max((x.height - 1) * params.strideH + kh - out.height, 0) / 2 : 0
            let padLeft = params.padding == .same ? max((x.width - 1) * params.strideW + kw - out.width, 0) / 2 : 0
            for y in 0..<out.height { for xx in 0..<out.width { for o in 0..<out.channels { out[y, xx, o] = bias[o] } } }
            for iy in 0..<x.height {
                for ix in 0..<x.width {
                    for ky in 0..<kh {
                        for kx in 0..<kw {
                            let oy = iy * params.strideH - padTop + ky, ox = ix * params.strideW - padLeft + kx
                            guard oy >= 0, oy < out.height, ox >= 0, ox < out.width else { continue }
                            for o in 0..<out.channels {
                                var sum = 0.0
                                for i in 0..<x.channels { sum += x[iy, ix, i] * w[((o * kh + ky) * kw + kx) * x.channels + i] }
                                out[oy, ox, o] += sum
                            }
                        }
                    }
                }
            }
        case .builtin(.add), .builtin(.mul):
            let isAdd = node.builtin == .add
            func operand(_ slot: Int) throws -> Tensor {
                if let c = graph.constants[node.inputs[slot]]?.floats {
                    return Tensor(height: 1, width: 1, channels: c.count, data: c.map(Double.init))
                }
                return try input(slot)
            }
            let a = try operand(0), b = try operand(1)
            let act = node.options.activation ?? .none
            for y in 0..<out.height {
                for x in 0..<out.width {
                    for c in 0..<out.channels {
                        func at(_ t: Tensor) -> Double {
                            t[t.height == 1 ? 0 : y, t.width == 1 ? 0 : x, t.channels == 1 ? 0 : c]
                        }
                        out[y, x, c] = Self.activation(isAdd ? at(a) + at(b) : at(a) * at(b), act)
                    }
                }
            }
        case .builtin(.relu), .builtin(.relu6), .builtin(.reluN1To1), .builtin(.tanh), .builtin(.logistic),
             .builtin(.hardSwish), .builtin(.prelu):
            let x = try input(0)
            let alpha = node.builtin == .prelu ? floats(node.inputs[1]) : []
            for (i, v) in x.data.enumerated() {
                let c = i % x.channels
                switch node.builtin! {
                case .relu: out.data[i] = max(v, 0)
                case .relu6: out.data[i] = min(max(v, 0), 6)
                case .reluN1To1: out.data[i] = min(max(v, -1), 1)
                case .tanh: out.data[i] = Foundation.tanh(v)
                case .logistic: out.data[i] = 1 / (1 + Foundation.exp(-v))
                case .hardSwish: out.data[i] = v * min(max(v + 3, 0), 6) / 6
                default: out.data[i] = v >= 0 ? v : v * alpha[alpha.count == 1 ? 0 : c]
                }
            }
        case .builtin(.maxPool2D), .builtin(.averagePool2D):
            let x = try input(0)
            guard case .pool2D(let o) = node.options else { throw Failure(description: "pool options") }
            let (_, top) = Self.samePadding(x.height, o.filterH, o.strideH, o.padding)
            let (_, left) = Self.samePadding(x.width, o.filterW, o.strideW, o.padding)
            for oy in 0..<out.height {
                for ox in 0..<out.width {
                    for c in 0..<out.channels {
                        var sum = 0.0, best = -Double.infinity, count = 0
                        for ky in 0..<o.filterH {
                            for kx in 0..<o.filterW {
                                let iy = oy * o.strideH - top + ky, ix = ox * o.strideW - left + kx
                                guard iy >= 0, iy < x.height, ix >= 0, ix < x.width else { continue }
                                sum += x[iy, ix, c]
                                best = max(best, x[iy, ix, c])
                                count += 1
                            }
                        }
                        let v = count == 0 ? 0 : (node.builtin == .averagePool2D ? sum / Double(count) : best)
                        out[oy, ox, c] = Self.activation(v, o.activation)
                    }
                }
            }
        case .builtin(.mean):
            let x = try input(0)
            for c in 0..<x.channels {
                var sum = 0.0
                for y in 0..<x.height { for xx in 0..<x.width { sum += x[y, xx, c] } }
                out.data[c] = sum / Double(x.height * x.width)
            }
        case .builtin(.pad):
            let x = try input(0)
            let pads = graph.constants[node.inputs[1]]?.ints ?? []
            let rank = shape(node.inputs[0]).count
            let before = Array(pads.enumerated().filter { $0.offset % 2 == 0 }.map(\.element).suffix(rank == 4 ? 3 : rank - 1))
            let (top, left, front) = rank == 4 ? (before[0], before[1], before[2])
                : rank == 3 ? (0, before[0], before[1]) : (0, 0, before[0])
            for y in 0..<x.height {
                for xx in 0..<x.width {
                    for c in 0..<x.channels { out[y + top, xx + left, c + front] = x[y, xx, c] }
                }
            }
        case .builtin(.reshape):
            out.data = try input(0).data
        case .builtin(.concatenation):
            guard case .concatenation(let rawAxis, _) = node.options else { throw Failure(description: "concat options") }
            let rank = outShape.count
            let axis = rawAxis < 0 ? rawAxis + rank : rawAxis
            // Row-major concatenation along `axis` of the full shapes.
            let outer = outShape[..<axis].reduce(1, *)
            var data: [Double] = []
            for o in 0..<outer {
                for slot in node.inputs.indices {
                    let t = try input(slot), s = shape(node.inputs[slot])
                    let chunk = s[axis...].reduce(1, *)
                    data += t.data[(o * chunk)..<((o + 1) * chunk)]
                }
            }
            out.data = data
        case .builtin(.resizeBilinear):
            let x = try input(0)
            guard case .resizeBilinear(let o) = node.options else { throw Failure(description: "resize options") }
            func source(_ d: Int, _ inSize: Int, _ outSize: Int) -> (Int, Int, Double) {
                let scale = o.alignCorners && outSize > 1 ? Double(inSize - 1) / Double(outSize - 1) : Double(inSize) / Double(outSize)
                let s = o.halfPixelCenters ? (Double(d) + 0.5) * scale - 0.5 : Double(d) * scale
                let lower = max(Int(s.rounded(.down)), 0)
                let upper = min(Int(s.rounded(.up)), inSize - 1)
                return (lower, upper, s - Double(lower))
            }
            for oy in 0..<out.height {
                let (y0, y1, fy) = source(oy, x.height, out.height)
                for ox in 0..<out.width {
                    let (x0, x1, fx) = source(ox, x.width, out.width)
                    for c in 0..<out.channels {
                        out[oy, ox, c] = x[y0, x0, c] * (1 - fy) * (1 - fx) + x[y0, x1, c] * (1 - fy) * fx
                            + x[y1, x0, c] * fy * (1 - fx) + x[y1, x1, c] * fy * fx
                    }
                }
            }
        case .builtin(.depthToSpace):
            let x = try input(0)
            guard case .depthToSpace(let b) = node.options else { throw Failure(description: "depth_to_space options") }
            for y in 0..<out.height {
                for xx in 0..<out.width {
                    for c in 0..<out.channels {
                        out[y, xx, c] = x[y / b, xx / b, ((y % b) * b + xx % b) * out.channels + c]
                    }
                }
            }
        default:
            throw Failure(description: "the reference has no \(node.kind)")
        }
        return out
    }
}

/// Deterministic model inputs, computed identically by Tools/make-nn-goldens.py.
enum NNTestInputs {
    /// Uniform pseudo-random values in lo...hi from a multiplicative hash of the index.
    static func random(count: Int, seed: UInt32, range: ClosedRange<Float>) -> [Float] {
        (0..<count).map { i in
            let hash = UInt32(truncatingIfNeeded: i) &* 2654435761 &+ seed &* 40503
            let unit = Float(hash >> 8) / Float(1 << 24)
            return unit * (range.upperBound - range.lowerBound) + range.lowerBound
        }
    }

    /// A photo-like 8-bit RGB pattern (gradients, a bright disc, stripes) mapped to lo...hi.
    static func pattern(height: Int, width: Int, range: ClosedRange<Float>) -> [Float] {
        var values: [Float] = []
        values.reserveCapacity(height * width * 3)
        for y in 0..<height {
            for x in 0..<width {
                let dx = x * 256 / width - 128, dy = y * 256 / height - 120
                let inDisc = dx * dx + dy * dy * 3 / 2 < 70 * 70
                for c in 0..<3 {
                    var q = (x * 255 / width * (c + 1) + y * 255 / height * (3 - c)) / 4
                    if inDisc { q = 200 - (dx * dx + dy * dy) / 64 + c * 10 }
                    if (x / 8 + y / 16) % 7 == 0 { q = q / 2 }
                    let byte = Float(min(max(q, 0), 255))
                    values.append(byte / 255 * (range.upperBound - range.lowerBound) + range.lowerBound)
                }
            }
        }
        return values
    }

    /// The two inputs of a model's golden tests, by name.
    static func inputs(for model: String, shape: [Int]) -> [(name: String, values: [Float])] {
        let range: ClosedRange<Float> = model.hasPrefix("face_detection") ? -1...1 : 0...1
        return [("pattern", pattern(height: shape[1], width: shape[2], range: range)),
                ("random", random(count: shape.reduce(1, *), seed: 7, range: range))]
    }
}

/// The CPU reference against LiteRT's own outputs (NNLiteRTGoldens, from Tools/make-nn-goldens.py).
final class NNReferenceTests: XCTestCase {
    func testReferenceMatchesLiteRTOnEveryModel() throws {
        for name in ModelFixtures.names {
            let graph = try NNGraph(contentsOf: try ModelFixtures.url(name))
            let shape = graph.tensors[graph.inputs[0]].shape
            for (inputName, input) in NNTestInputs.inputs(for: name, shape: shape) {
                let outputs = try NNReference(graph: graph).run([input])
                for (index, output) in outputs.enumerated() {
                    let golden = try XCTUnwrap(NNLiteRTGoldens.entry(model: name, input: inputName, output: index),
                                               "no golden for \(name)/\(inputName)/\(index)")
                    let error = golden.maxSampleError(output)
                    XCTAssertLessThanOrEqual(error, 1e-4, "\(name) \(inputName) output \(index): max error \(error)")
                    XCTAssertEqual(output.reduce(0, +), golden.sum, accuracy: 1e-5 * golden.absSum + 1e-4,
                                   "\(name) \(inputName) output \(index) sum")
                }
            }
        }
    }
}
