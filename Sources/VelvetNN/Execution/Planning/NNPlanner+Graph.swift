/// Reading the graph for planning: operands, constants, shapes, and who reads what.

extension NNPlanner {
    func geometry(_ tensor: Int) -> NNTensorGeometry { NNTensorGeometry(shape: graph.tensors[tensor].shape) }

    func validateTensors() throws {
        for index in graph.inputs {
            guard index >= 0, index < graph.tensors.count else {
                throw NNError.invalidGraph("graph input \(index) is not a tensor")
            }
        }
        for node in graph.nodes {
            for t in node.inputs + node.outputs where t >= graph.tensors.count {
                throw NNError.invalidGraph("an operator refers to tensor \(t) of \(graph.tensors.count)")
            }
        }
        let runtime = Set(graph.inputs + graph.nodes.flatMap { $0.inputs + $0.outputs }.filter { $0 >= 0 })
            .filter { graph.constants[$0] == nil }
        for t in runtime.sorted() where !NNTensorGeometry.isSupported(graph.tensors[t].shape) {
            throw NNError.unsupportedOperator("\(graph.name(t)) has shape \(graph.tensors[t].shape); VelvetNN runs batch-1 tensors of rank 1 to 4")
        }
    }

    func runtimeInput(_ node: Int, _ slot: Int) throws -> Int {
        let inputs = graph.nodes[node].inputs
        guard slot < inputs.count, inputs[slot] >= 0 else {
            throw NNError.invalidGraph("\(graph.label(node)) lacks input \(slot)")
        }
        let tensor = inputs[slot]
        guard graph.constants[tensor] == nil else {
            throw NNError.unsupportedOperator("\(graph.label(node)) has a constant \(graph.name(tensor)) where VelvetNN needs a computed tensor")
        }
        return tensor
    }

    func constant(_ node: Int, _ slot: Int) throws -> (values: NNGraph.Constant, shape: [Int])? {
        let inputs = graph.nodes[node].inputs
        guard slot < inputs.count, inputs[slot] >= 0 else { return nil }
        guard let value = graph.constants[inputs[slot]] else {
            throw NNError.unsupportedOperator("\(graph.label(node)) computes \(graph.name(inputs[slot])) at run time; VelvetNN needs it constant")
        }
        return (value, graph.tensors[inputs[slot]].shape)
    }

    func floats(_ node: Int, _ slot: Int, count: Int, what: String) throws -> [Float] {
        guard let (value, _) = try constant(node, slot), let values = value.floats else {
            throw NNError.invalidGraph("\(graph.label(node)) lacks float \(what)")
        }
        guard values.count == count else {
            throw NNError.invalidGraph("\(graph.label(node)) has \(values.count) \(what) values, expected \(count)")
        }
        return values
    }

    func output(_ node: Int) throws -> Int {
        let outputs = graph.nodes[node].outputs
        guard outputs.count == 1, outputs[0] >= 0 else {
            throw NNError.unsupportedOperator("\(graph.label(node)) has \(outputs.count) outputs; VelvetNN runs single-output operators")
        }
        return outputs[0]
    }

    func expect(_ node: Int, _ tensor: Int, _ shape: NNTensorGeometry) throws {
        guard geometry(tensor) == shape else {
            let actual = geometry(tensor)
            throw NNError.invalidGraph("\(graph.label(node)) should produce \(shape.height)x\(shape.width)x\(shape.channels), but \(graph.name(tensor)) is \(actual.height)x\(actual.width)x\(actual.channels)")
        }
    }

    /// TensorFlow's padding: SAME pads max((out-1)*s + k - in, 0), the smaller half first.
    static func padding(_ padding: TFLitePadding, input: Int, kernel: Int, stride: Int) -> (output: Int, before: Int) {
        switch padding {
        case .same:
            let output = (input + stride - 1) / stride
            return (output, max((output - 1) * stride + kernel - input, 0) / 2)
        case .valid:
            return ((input - kernel) / stride + 1, 0)
        }
    }

    /// The single operator reading `tensor`, when nothing else (including the graph's
    /// outputs) needs the tensor itself.
    func soleConsumer(of tensor: Int) -> Int? {
        guard fuse, !graphOutputs.contains(tensor), let readers = consumers[tensor], readers.count == 1,
              !skipped.contains(readers[0]) else { return nil }
        return readers[0]
    }

    /// Whether `tensor` is ready before operator `node` runs.
    func available(_ tensor: Int, before node: Int) -> Bool {
        if graph.inputs.contains(tensor) { return true }
        guard let p = producer[tensor] else { return false }
        return p < node
    }

    /// Whether `tensor` is read only as a CONV_2D's input, directly or through a folded resize.
    func isOnlyConvolutionInput(_ tensor: Int) -> Bool {
        guard fuse, !graphOutputs.contains(tensor), let readers = consumers[tensor], readers.count == 1 else { return false }
        var reader = readers[0], read = tensor
        if let resized = graph.nodes[reader].outputs.first, resizedInputs[resized]?.source == tensor {
            guard let next = soleConsumer(of: resized) else { return false }
            (reader, read) = (next, resized)
        } else if skipped.contains(reader) {
            return false
        }
        return graph.nodes[reader].builtin == .conv2D && graph.nodes[reader].inputs.first == read
    }

    /// Whether operator `node` is a CONV_2D with a 1x1 kernel and stride 1.
    func isPointwiseConv(_ node: Int) -> Bool {
        guard graph.nodes[node].builtin == .conv2D, case .conv2D(let o) = graph.nodes[node].options,
              o.strideH == 1, o.strideW == 1, o.dilationH == 1, o.dilationW == 1,
              graph.nodes[node].inputs.count >= 2, graph.nodes[node].inputs[1] >= 0 else { return false }
        let shape = graph.tensors[graph.nodes[node].inputs[1]].shape
        return graph.constants[graph.nodes[node].inputs[1]] != nil && shape.count == 4 && shape[1] == 1 && shape[2] == 1
    }
}
