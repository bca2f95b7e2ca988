/// Lowering ADD and MUL (with a following ADD or activation, or a gate folded into a
/// convolution's input).

extension NNPlanner {
    mutating func planBinary(_ index: Int, op: Int32) throws {
        let node = graph.nodes[index]
        let out = try output(index)
        guard node.inputs.count == 2 else { throw NNError.invalidGraph("\(graph.label(index)) needs 2 inputs") }
        let target = geometry(out)
        var first: Int?
        var operand: NNOperand?
        let kind = op == 1 ? "ADD" : "MUL"
        for (slot, raw) in node.inputs.enumerated() {
            let other = node.inputs[1 - slot]
            guard raw >= 0, graph.constants[raw] == nil, other >= 0 else { continue }
            let source = channelPads[raw] ?? raw
            guard first == nil, source == raw, geometry(raw) == target else { continue }
            // `raw` is the full-size operand; classify the other one.
            if let constant = graph.constants[other] {
                guard let values = constant.floats, values.count == target.channels || values.count == 1 else { continue }
                operand = .broadcastConstant(offset: appendChannelVector(values, channels: target.channels))
            } else {
                let otherSource = channelPads[other] ?? other
                let shape = geometry(otherSource)
                if shape == target || (shape.pixels == target.pixels && shape.channels <= target.channels && channelPads[other] != nil) {
                    operand = .tensor(otherSource)
                } else if shape.pixels == 1 && shape.channels == target.channels {
                    operand = .broadcastTensor(otherSource)
                } else {
                    continue
                }
            }
            first = raw
        }
        guard let input = first, let operand else {
            let shapes = node.inputs.map { $0 >= 0 ? "\(graph.tensors[$0].shape)" : "none" }.joined(separator: " and ")
            throw NNError.unsupportedOperator("\(graph.label(index)) \(kind) of \(shapes) (VelvetNN broadcasts only a [1,1,1,C] vector)")
        }
        var activation = try fusedActivation(index)
        var result = out
        // A MUL's product added to another tensor (the selfie decoder's skip * gate + path).
        var addend: Int?
        if op == 2, activation == .none, let next = soleConsumer(of: out), graph.nodes[next].builtin == .add,
           graph.nodes[next].inputs.count == 2, graph.nodes[next].outputs.count == 1, graph.nodes[next].outputs[0] >= 0 {
            let other = graph.nodes[next].inputs[0] == out ? graph.nodes[next].inputs[1] : graph.nodes[next].inputs[0]
            if other != out, other >= 0, graph.constants[other] == nil, channelPads[other] == nil,
               geometry(other) == target, geometry(graph.nodes[next].outputs[0]) == target, available(other, before: next) {
                addend = other
                activation = try fusedActivation(next)
                skipped.insert(next)
                position = next
                result = graph.nodes[next].outputs[0]
            }
        }
        // A MUL by a gate vector read only by a CONV_2D (directly or through a folded
        // resize, which commutes with a per-channel scale): the convolution scales its input.
        if op == 2, activation == .none, addend == nil, case .broadcastTensor(let gate) = operand,
           isOnlyConvolutionInput(out) {
            inputScales[out] = (input, gate)
            return
        }
        if activation == .none, let next = soleConsumer(of: result), isActivation(next),
           graph.nodes[next].inputs.first == result, graph.nodes[next].outputs.count == 1 {
            activation = try standaloneActivation(next) ?? .none
            skipped.insert(next)
            position = next
            result = graph.nodes[next].outputs[0]
        }
        steps.append(.elementwise(input: input, output: result, op: op, operand: operand, addend: addend, activation: activation))
    }
}
