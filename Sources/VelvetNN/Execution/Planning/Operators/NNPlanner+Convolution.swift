/// Lowering CONV_2D, DEPTHWISE_CONV_2D (with a 1x1 convolution after it in the same launch)
/// and the transposed convolution.

extension NNPlanner {
    mutating func planConv(_ index: Int, depthwise: Bool) throws {
        let convolution = try makeConvolution(index, depthwise: depthwise)
        if depthwise, let pointwise = try pointwiseAfter(convolution) {
            steps.append(.depthwisePointwise(depthwise: convolution, pointwise: pointwise))
        } else {
            steps.append(depthwise ? .depthwise(convolution) : .conv(convolution))
        }
    }

    /// The 1x1 convolution reading a depthwise convolution's output, planned to run in the
    /// same launch: the depthwise output feeds nothing else, and the depthwise's epilogue is
    /// an activation at most (the pair runs where the 1x1's fused chain ends).
    mutating func pointwiseAfter(_ depthwise: NNConvolution) throws -> NNConvolution? {
        guard fuse, tuning.fuseDepthwisePointwise, depthwise.epilogue.residual == nil, depthwise.epilogue.act2 == .none,
              let next = soleConsumer(of: depthwise.output), graph.nodes[next].builtin == .conv2D,
              graph.nodes[next].inputs.first == depthwise.output, spatialPads[depthwise.output] == nil,
              NNTuning.depthwisePointwiseFits(middleGroups: geometry(depthwise.output).groups),
              let (_, shape) = try constant(next, 1), shape.count == 4, shape[1] == 1, shape[2] == 1,
              case .conv2D(let o) = graph.nodes[next].options, o.strideH == 1, o.strideW == 1,
              o.dilationH == 1, o.dilationW == 1 else { return nil }
        position = next
        skipped.insert(next)
        return try makeConvolution(next, depthwise: false)
    }

    /// Plans a CONV_2D or DEPTHWISE_CONV_2D with whatever follows it fused in.
    mutating func makeConvolution(_ index: Int, depthwise: Bool, allowResidual: Bool = true) throws -> NNConvolution {
        let node = graph.nodes[index]
        var input = try runtimeInput(index, 0)
        let out = try output(index)
        guard let (weightValue, wShape) = try constant(index, 1), let weights = weightValue.floats, wShape.count == 4 else {
            throw NNError.invalidGraph("\(graph.label(index)) lacks 4D float weights")
        }
        let padding: TFLitePadding, strideY: Int, strideX: Int, dilations: (Int, Int)
        switch node.options {
        case .conv2D(let o): (padding, strideY, strideX, dilations) = (o.padding, o.strideH, o.strideW, (o.dilationH, o.dilationW))
        case .depthwiseConv2D(let o):
            (padding, strideY, strideX, dilations) = (o.padding, o.strideH, o.strideW, (o.dilationH, o.dilationW))
        default: throw NNError.invalidGraph("\(graph.label(index)) lacks convolution options")
        }
        guard dilations == (1, 1) else {
            throw NNError.unsupportedOperator("\(graph.label(index)) uses dilation \(dilations.0)x\(dilations.1)")
        }
        guard strideY > 0, strideX > 0 else { throw NNError.invalidGraph("\(graph.label(index)) has stride \(strideY)x\(strideX)") }
        // A folded spatial PAD: read its input, with its padding added to ours.
        var extraTop = 0, extraLeft = 0
        let paddedShape = geometry(input)
        if let folded = spatialPads[input] {
            (input, extraTop, extraLeft) = (folded.source, folded.top, folded.left)
        }
        // A folded RESIZE_BILINEAR before a 1x1 convolution: read its input, resized.
        let resizedInput = depthwise ? nil : resizedInputs.removeValue(forKey: input)
        if let resizedInput { input = resizedInput.source }
        let inShape = geometry(input)
        let kh = wShape[1], kw = wShape[2]
        let outChannels = geometry(out).channels
        if depthwise {
            guard wShape[0] == 1, wShape[3] == inShape.channels, outChannels == inShape.channels else {
                throw NNError.unsupportedOperator("\(graph.label(index)) has weights \(wShape) for \(inShape.channels) channels; only depth multiplier 1 is supported")
            }
        } else {
            guard wShape[3] == inShape.channels, wShape[0] == outChannels else {
                throw NNError.invalidGraph("\(graph.label(index)) has weights \(wShape) for \(inShape.channels) -> \(outChannels) channels")
            }
        }
        let vertical = Self.padding(padding, input: paddedShape.height, kernel: kh, stride: strideY)
        let horizontal = Self.padding(padding, input: paddedShape.width, kernel: kw, stride: strideX)
        guard vertical.output > 0, horizontal.output > 0 else {
            throw NNError.invalidGraph("\(graph.label(index)) has a \(kh)x\(kw) kernel larger than its input")
        }
        try expect(index, out, NNTensorGeometry(height: vertical.output, width: horizontal.output, channels: outChannels))

        let weightOffset: Int
        if depthwise {
            // [1, KH, KW, C] -> per tap, one vec4 per channel group: neighbouring invocations
            // (neighbouring groups) read neighbouring weights.
            let groups = (outChannels + 3) / 4
            var packed = [Float](repeating: 0, count: groups * kh * kw * 4)
            for tap in 0..<(kh * kw) {
                for c in 0..<outChannels {
                    packed[tap * groups * 4 + c] = weights[tap * outChannels + c]
                }
            }
            weightOffset = appendConstants(packed)
        } else {
            weightOffset = appendConvWeights(weights, outC: outChannels, kh: kh, kw: kw, inC: inShape.channels)
        }
        let biasOffset = try appendBias(index, slot: 2, channels: outChannels)
        var convolution = NNConvolution(input: input, output: out, weightOffset: weightOffset, biasOffset: biasOffset,
                                        kernelH: kh, kernelW: kw, strideY: strideY, strideX: strideX,
                                        padTop: vertical.before + extraTop, padLeft: horizontal.before + extraLeft)
        convolution.inputResize = resizedInput?.resize
        if !depthwise, let scaled = inputScales.removeValue(forKey: input) {
            convolution.input = scaled.source
            convolution.inputScale = scaled.gate
        }
        convolution.epilogue.act1 = try fusedActivation(index)
        convolution.output = try absorbFollowers(output: out, epilogue: &convolution.epilogue, allowResidual: allowResidual,
                                                 allowPooledResidual: !depthwise)
        return convolution
    }

    mutating func planTransposeConv(_ index: Int) throws {
        let node = graph.nodes[index]
        let input = try runtimeInput(index, 0), out = try output(index)
        guard let bytes = node.customOptions else {
            throw NNError.invalidGraph("\(graph.label(index)) lacks its TfLiteTransposeConvParams")
        }
        let params = try TFLiteTransposeConvParams(rawCustomOptions: bytes)
        guard let (weightValue, wShape) = try constant(index, 1), let weights = weightValue.floats, wShape.count == 4 else {
            throw NNError.invalidGraph("\(graph.label(index)) lacks 4D float weights")
        }
        let inShape = geometry(input), outShape = geometry(out)
        let kh = wShape[1], kw = wShape[2]
        guard wShape[3] == inShape.channels, wShape[0] == outShape.channels else {
            throw NNError.invalidGraph("\(graph.label(index)) has weights \(wShape) for \(inShape.channels) -> \(outShape.channels) channels")
        }
        func extent(_ input: Int, _ kernel: Int, _ stride: Int) -> (Int, Int) {
            switch params.padding {
            case .same:
                let output = input * stride
                return (output, max((input - 1) * stride + kernel - output, 0) / 2)
            case .valid:
                return ((input - 1) * stride + kernel, 0)
            }
        }
        let (outH, padTop) = extent(inShape.height, kh, params.strideH)
        let (outW, padLeft) = extent(inShape.width, kw, params.strideW)
        try expect(index, out, NNTensorGeometry(height: outH, width: outW, channels: outShape.channels))
        let weightOffset = appendConvWeights(weights, outC: outShape.channels, kh: kh, kw: kw, inC: inShape.channels)
        let biasOffset = try appendBias(index, slot: 2, channels: outShape.channels)
        var convolution = NNConvolution(input: input, output: out, weightOffset: weightOffset, biasOffset: biasOffset,
                                        kernelH: kh, kernelW: kw, strideY: params.strideH, strideX: params.strideW,
                                        padTop: padTop, padLeft: padLeft)
        convolution.output = try absorbFollowers(output: out, epilogue: &convolution.epilogue, allowResidual: false)
        steps.append(.transposeConv(convolution))
    }
}
