/// Lowering pools and means (a global mean as squeeze-and-excite when fused).

extension NNPlanner {
    mutating func planPool(_ index: Int) throws {
        let node = graph.nodes[index]
        let input = try runtimeInput(index, 0), out = try output(index)
        guard case .pool2D(let o) = node.options, o.strideH > 0, o.strideW > 0, o.filterH > 0, o.filterW > 0 else {
            throw NNError.invalidGraph("\(graph.label(index)) lacks valid pooling options")
        }
        let inShape = geometry(input)
        let vertical = Self.padding(o.padding, input: inShape.height, kernel: o.filterH, stride: o.strideH)
        let horizontal = Self.padding(o.padding, input: inShape.width, kernel: o.filterW, stride: o.strideW)
        try expect(index, out, NNTensorGeometry(height: vertical.output, width: horizontal.output, channels: inShape.channels))
        let average = node.builtin == .averagePool2D
        let activation = try fusedActivation(index)
        let global = vertical.output == 1 && horizontal.output == 1 && vertical.before == 0 && horizontal.before == 0
            && o.filterH >= inShape.height && o.filterW >= inShape.width
        if average && global {
            try planGlobalMean(input: input, output: out, activation: activation)
        } else {
            steps.append(.pool(input: input, output: out, filterH: o.filterH, filterW: o.filterW, strideY: o.strideH,
                               strideX: o.strideW, padTop: vertical.before, padLeft: horizontal.before,
                               average: average, activation: activation))
        }
    }

    /// A mean over every pixel. Fused, it runs in the squeeze-and-excite kernel, which
    /// sums with many workgroups and also runs the one or two dense layers (1x1
    /// convolutions of the 1x1 result, with their activations) that read it.
    mutating func planGlobalMean(input: Int, output: Int, activation: NNActivation) throws {
        let groupLimit = NNTuning.squeezeExciteGroupLimit
        guard fuse, activation == .none, geometry(input).groups <= groupLimit else {
            if let (a, b) = meanAddends.removeValue(forKey: input) {
                // The ADD was left for this mean to read: run it here after all.
                steps.append(.elementwise(input: a, output: input, op: 1, operand: .tensor(b), addend: nil, activation: .none))
            }
            steps.append(.globalMean(input: input, output: output, activation: activation))
            return
        }
        var layers: [NNConvolution] = []
        var current = output
        while layers.count < 2, let next = soleConsumer(of: current), graph.nodes[next].builtin == .conv2D,
              graph.nodes[next].inputs.first == current, let (_, shape) = try constant(next, 1), shape.count == 4,
              shape[1] == 1, shape[2] == 1, geometry(graph.nodes[next].outputs.first ?? current).pixels == 1,
              (shape[0] + 3) / 4 <= groupLimit {
            position = next
            skipped.insert(next)
            let layer = try makeConvolution(next, depthwise: false, allowResidual: false)
            layers.append(layer)
            current = layer.output
        }
        let addend = meanAddends.removeValue(forKey: input)
        steps.append(.squeezeExcite(input: addend?.0 ?? input, addend: addend?.1, output: current, layers: layers))
    }

    mutating func planMean(_ index: Int) throws {
        let input = try runtimeInput(index, 0), out = try output(index)
        let rank = graph.tensors[input].shape.count
        guard let (value, _) = try constant(index, 1), let axes = value.ints, rank == 4,
              Set(axes.map { $0 < 0 ? $0 + rank : $0 }) == [1, 2] else {
            throw NNError.unsupportedOperator("\(graph.label(index)) MEAN is supported over axes 1 and 2 of a 4D tensor only")
        }
        let channels = geometry(input).channels
        try expect(index, out, NNTensorGeometry(height: 1, width: 1, channels: channels))
        try planGlobalMean(input: input, output: out, activation: .none)
    }
}
