/// An activation applied inside a kernel's epilogue. Codes match nn_common.glsl.
enum NNActivation: Equatable {
    case none, relu, relu6, reluN1To1, tanh, logistic, hardSwish
    /// Per-channel slopes at this vec4 offset in the constants buffer.
    case prelu(alphaOffset: Int)

    var code: Int32 {
        switch self {
        case .none: return 0
        case .relu: return 1
        case .relu6: return 2
        case .reluN1To1: return 3
        case .tanh: return 4
        case .logistic: return 5
        case .hardSwish: return 6
        case .prelu: return 7
        }
    }

    var alphaOffset: Int32 {
        if case .prelu(let offset) = self { return Int32(offset) }
        return 0
    }
}

/// What a convolution does after accumulating: act2(act1(acc + bias) + residual).
struct NNEpilogue: Equatable {
    var act1: NNActivation = .none
    /// A fused ADD's other operand (it may have fewer channels: a fused channel PAD).
    var residual: Int?
    /// Not 0: `residual` is the input of a fused k x k, stride k MAX_POOL (the skip path of a
    /// downsampling block), whose output the epilogue computes as it reads.
    var residualPool = 0
    /// Not nil: `residual` is the input of a fused RESIZE_BILINEAR (a feature pyramid's
    /// upsampled path), whose output the epilogue samples as it reads.
    var residualResize: NNResize?
    var act2: NNActivation = .none
}

/// RESIZE_BILINEAR's source coordinate: src = (dst + centreOffset) * scale - centreOffset.
struct NNResize: Equatable {
    var scaleY: Float
    var scaleX: Float
    var centreOffset: Float
}

struct NNConvolution: Equatable {
    var input: Int
    var output: Int
    var weightOffset: Int
    var biasOffset: Int
    var kernelH: Int, kernelW: Int
    var strideY: Int, strideX: Int
    var padTop: Int, padLeft: Int
    /// A [1,1,1,C] runtime tensor the input's channels are multiplied by as they are read
    /// (a fused MUL: squeeze-and-excite's gate, before a CONV_2D).
    var inputScale: Int?
    /// Not nil (1x1, stride 1 only): the input is read through this bilinear resize to the
    /// output's size (a folded RESIZE_BILINEAR whose output only this convolution read).
    var inputResize: NNResize?
    var epilogue = NNEpilogue()
}

/// A depthwise convolution and the 1x1 convolution reading it.
struct NNBlock: Equatable {
    var depthwise: NNConvolution
    var pointwise: NNConvolution
}

/// A DEPTH_TO_SPACE folded into the copy of a graph output.
struct NNDepthToSpace: Equatable {
    var source: Int
    var output: Int
    var block: Int
}

/// A graph output written by the step computing it, when only the output's copy read its
/// result (through a DEPTH_TO_SPACE of `block`, or directly: 1).
struct NNDenseOutput: Equatable {
    var index: Int
    var block: Int

    /// What the step's name gains.
    var name: String { (block > 1 ? "+depth_to_space" : "") + "+unpack" }
}

/// The second operand of an elementwise ADD / MUL.
enum NNOperand: Equatable {
    /// A runtime tensor of the first operand's size (or fewer channels, read as zero).
    case tensor(Int)
    /// A runtime [1,1,1,C] tensor broadcast over every pixel.
    case broadcastTensor(Int)
    /// A constant C-vector (vec4 offset into the constants buffer) broadcast over every pixel.
    case broadcastConstant(offset: Int)
}

/// One planned kernel launch. Tensor fields are graph tensor indices.
enum NNStep: Equatable {
    case conv(NNConvolution)
    case depthwise(NNConvolution)
    case transposeConv(NNConvolution)
    /// A depthwise convolution and the 1x1 convolution reading its output, in one launch;
    /// the pointwise's input is the depthwise's output, which never reaches memory.
    case depthwisePointwise(depthwise: NNConvolution, pointwise: NNConvolution)
    /// Two depthwise+1x1 blocks in one launch, the first one's output read only by the
    /// second's depthwise (recomputed around each tile, never stored).
    case blockPair(first: NNBlock, second: NNBlock)
    /// op 0: activation only, 1: ADD, 2: MUL; then a fused ADD of `addend` (a tensor of the
    /// output's shape) when there is one, then the activation.
    case elementwise(input: Int, output: Int, op: Int32, operand: NNOperand?, addend: Int?, activation: NNActivation)
    case pool(input: Int, output: Int, filterH: Int, filterW: Int, strideY: Int, strideX: Int,
              padTop: Int, padLeft: Int, average: Bool, activation: NNActivation)
    case globalMean(input: Int, output: Int, activation: NNActivation)
    /// The mean over every pixel (of `input` + `addend`, a fused ADD, when there is one),
    /// then up to two dense layers (1x1 convolutions of a 1x1 tensor, with bias and
    /// activation) in one launch.
    case squeezeExcite(input: Int, addend: Int?, output: Int, layers: [NNConvolution])
    case pad(input: Int, output: Int, top: Int, left: Int, front: Int)
    case reshape(input: Int, output: Int)
    /// One input of a concatenation, placed at (y0, x0, c0) of the output.
    case place(input: Int, output: Int, y0: Int, x0: Int, c0: Int)
    case depthToSpace(input: Int, output: Int, block: Int)
    case resizeBilinear(input: Int, output: Int, resize: NNResize)
    /// Copies graph output `index` (tensor `input`) into its dense output buffer; with
    /// `depthToSpace`, the output is that DEPTH_TO_SPACE's, computed as it is copied.
    case unpack(input: Int, index: Int, depthToSpace: NNDepthToSpace?)
    /// A depthwise convolution writing graph output `output.index`'s dense buffer itself.
    case depthwiseToOutput(NNConvolution, output: NNDenseOutput)
    /// A 1x1 convolution and the depthwise convolution reading its output, in one launch;
    /// the 1x1's output is recomputed around each tile and never stored. With `output`, the
    /// result goes to that graph output's dense buffer.
    case pointwiseDepthwise(pointwise: NNConvolution, depthwise: NNConvolution, output: NNDenseOutput?)

    /// Tensors the step reads.
    var reads: [Int] {
        switch self {
        case .conv(let c), .depthwise(let c), .transposeConv(let c), .depthwiseToOutput(let c, _):
            return [c.input] + (c.epilogue.residual.map { [$0] } ?? []) + (c.inputScale.map { [$0] } ?? [])
        case .depthwisePointwise(let d, let c):
            return [d.input] + (c.epilogue.residual.map { [$0] } ?? [])
        case .pointwiseDepthwise(let c, _, _):
            return [c.input]
        case .blockPair(let a, let b):
            return [a.depthwise.input] + (b.pointwise.epilogue.residual.map { [$0] } ?? [])
        case .elementwise(let input, _, _, let operand, let addend, _):
            let added = addend.map { [$0] } ?? []
            switch operand {
            case .tensor(let t)?, .broadcastTensor(let t)?: return [input, t] + added
            default: return [input] + added
            }
        case .squeezeExcite(let input, let addend, _, _):
            return [input] + (addend.map { [$0] } ?? [])
        case .pool(let input, _, _, _, _, _, _, _, _, _), .globalMean(let input, _, _), .pad(let input, _, _, _, _),
             .reshape(let input, _), .place(let input, _, _, _, _), .depthToSpace(let input, _, _),
             .resizeBilinear(let input, _, _):
            return [input]
        case .unpack(let input, _, let depthToSpace):
            return [depthToSpace?.source ?? input]
        }
    }

    /// The arena tensor the step writes (nil for the steps that write an output buffer).
    var write: Int? {
        switch self {
        case .conv(let c), .depthwise(let c), .transposeConv(let c), .depthwisePointwise(_, let c): return c.output
        case .blockPair(_, let b): return b.pointwise.output
        case .elementwise(_, let output, _, _, _, _), .pool(_, let output, _, _, _, _, _, _, _, _),
             .globalMean(_, let output, _), .squeezeExcite(_, _, let output, _), .pad(_, let output, _, _, _), .reshape(_, let output),
             .place(_, let output, _, _, _), .depthToSpace(_, let output, _), .resizeBilinear(_, let output, _):
            return output
        case .pointwiseDepthwise(_, let d, let output): return output == nil ? d.output : nil
        case .unpack, .depthwiseToOutput: return nil
        }
    }

    /// Short name for labels and logs.
    var name: String {
        switch self {
        case .conv(let c):
            return (c.inputScale == nil ? "" : "mul+") + (c.inputResize == nil ? "" : "resize+") + "conv\(c.kernelH)x\(c.kernelW)"
        case .depthwise(let c): return "depthwise\(c.kernelH)x\(c.kernelW)"
        case .transposeConv: return "transpose_conv"
        case .depthwisePointwise(let d, _): return "depthwise\(d.kernelH)x\(d.kernelW)+conv1x1"
        case .blockPair: return "block_pair"
        case .elementwise(_, _, let op, _, let addend, _): return ["activation", "add", "mul"][Int(op)] + (addend == nil ? "" : "+add")
        case .pool(_, _, _, _, _, _, _, _, let average, _): return average ? "avg_pool" : "max_pool"
        case .globalMean: return "mean"
        case .squeezeExcite(_, let addend, _, let layers):
            return (addend == nil ? "" : "add+") + (layers.isEmpty ? "mean" : "mean+dense\(layers.count)")
        case .pad: return "pad"
        case .reshape: return "reshape"
        case .place: return "concat"
        case .depthToSpace: return "depth_to_space"
        case .resizeBilinear: return "resize_bilinear"
        case .unpack(_, _, let depthToSpace): return depthToSpace == nil ? "unpack" : "depth_to_space+unpack"
        case .depthwiseToOutput(let c, let output):
            return "depthwise\(c.kernelH)x\(c.kernelW)" + output.name
        case .pointwiseDepthwise(_, let d, let output):
            return "conv1x1+depthwise\(d.kernelH)x\(d.kernelW)" + (output?.name ?? "")
        }
    }
}
