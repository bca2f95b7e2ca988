/// Lowering the operators that move values: PAD, RESHAPE, CONCATENATION, RESIZE_BILINEAR
/// and DEPTH_TO_SPACE.

extension NNPlanner {
    mutating func planPad(_ index: Int) throws {
        let input = try runtimeInput(index, 0), out = try output(index)
        let rank = graph.tensors[input].shape.count
        guard let (value, _) = try constant(index, 1), let pads = value.ints, pads.count == rank * 2,
              pads.allSatisfy({ $0 >= 0 }) else {
            throw NNError.unsupportedOperator("\(graph.label(index)) PAD needs constant non-negative paddings")
        }
        if graph.nodes[index].inputs.count > 2, graph.nodes[index].inputs[2] >= 0,
           graph.constants[graph.nodes[index].inputs[2]]?.floats?.allSatisfy({ $0 == 0 }) != true {
            throw NNError.unsupportedOperator("\(graph.label(index)) pads with a non-zero value")
        }
        // Per axis of the [H, W, C] view: (before, after).
        let view: [(Int, Int)]
        switch rank {
        case 4 where pads[0] == 0 && pads[1] == 0: view = [(pads[2], pads[3]), (pads[4], pads[5]), (pads[6], pads[7])]
        case 3 where pads[0] == 0 && pads[1] == 0: view = [(0, 0), (pads[2], pads[3]), (pads[4], pads[5])]
        case 2 where pads[0] == 0 && pads[1] == 0: view = [(0, 0), (0, 0), (pads[2], pads[3])]
        default: throw NNError.unsupportedOperator("\(graph.label(index)) pads the batch axis or a rank-\(rank) tensor")
        }
        let s = geometry(input)
        try expect(index, out, NNTensorGeometry(height: s.height + view[0].0 + view[0].1, width: s.width + view[1].0 + view[1].1,
                                                channels: s.channels + view[2].0 + view[2].1))
        steps.append(.pad(input: input, output: out, top: view[0].0, left: view[1].0, front: view[2].0))
    }

    mutating func planReshape(_ index: Int) throws {
        let input = try runtimeInput(index, 0), out = try output(index)
        guard graph.tensors[input].shape.reduce(1, *) == graph.tensors[out].shape.reduce(1, *) else {
            throw NNError.invalidGraph("\(graph.label(index)) reshapes \(graph.tensors[input].shape) into \(graph.tensors[out].shape)")
        }
        let a = geometry(input), b = geometry(out)
        // Same channel count, or whole vec4s on both sides: the packed bytes are identical.
        if a.channels == b.channels || (a.channels % 4 == 0 && b.channels % 4 == 0) {
            aliases[out] = input
        } else {
            steps.append(.reshape(input: input, output: out))
        }
    }

    mutating func planConcatenation(_ index: Int) throws {
        let node = graph.nodes[index]
        let out = try output(index)
        guard case .concatenation(let rawAxis, let activation) = node.options else {
            throw NNError.invalidGraph("\(graph.label(index)) lacks concatenation options")
        }
        guard activation == .none else {
            throw NNError.unsupportedOperator("\(graph.label(index)) CONCATENATION with a fused activation")
        }
        let rank = graph.tensors[out].shape.count
        let axis = rawAxis < 0 ? rawAxis + rank : rawAxis
        // The axis of the [H, W, C] view: 0 = H, 1 = W, 2 = C.
        let viewAxis: Int
        switch (rank, axis) {
        case (4, 1): viewAxis = 0
        case (4, 2), (3, 1): viewAxis = 1
        case (4, 3), (3, 2), (2, 1), (1, 0): viewAxis = 2
        default: throw NNError.unsupportedOperator("\(graph.label(index)) concatenates along axis \(rawAxis) of a rank-\(rank) tensor")
        }
        let target = geometry(out)
        var position = 0
        for slot in node.inputs.indices {
            let input = try runtimeInput(index, slot)
            let s = geometry(input)
            let extents = [s.height, s.width, s.channels], full = [target.height, target.width, target.channels]
            for a in 0..<3 where a != viewAxis && extents[a] != full[a] {
                throw NNError.invalidGraph("\(graph.label(index)) joins \(graph.tensors[input].shape) into \(graph.tensors[out].shape)")
            }
            let origin = (0..<3).map { $0 == viewAxis ? position : 0 }
            steps.append(.place(input: input, output: out, y0: origin[0], x0: origin[1], c0: origin[2]))
            position += extents[viewAxis]
        }
        guard position == [target.height, target.width, target.channels][viewAxis] else {
            throw NNError.invalidGraph("\(graph.label(index)) inputs do not fill \(graph.tensors[out].shape)")
        }
    }

    mutating func planResize(_ index: Int) throws {
        let (input, out, resize) = try resizeParameters(index)
        steps.append(.resizeBilinear(input: input, output: out, resize: resize))
    }

    func resizeParameters(_ index: Int) throws -> (input: Int, output: Int, resize: NNResize) {
        let input = try runtimeInput(index, 0), out = try output(index)
        guard case .resizeBilinear(let o) = graph.nodes[index].options, !(o.alignCorners && o.halfPixelCenters) else {
            throw NNError.unsupportedOperator("\(graph.label(index)) RESIZE_BILINEAR with both align_corners and half_pixel_centers")
        }
        let a = geometry(input), b = geometry(out)
        guard a.channels == b.channels else { throw NNError.invalidGraph("\(graph.label(index)) changes the channel count") }
        func scale(_ input: Int, _ output: Int) -> Float {
            o.alignCorners && output > 1 ? Float(input - 1) / Float(output - 1) : Float(input) / Float(output)
        }
        return (input, out, NNResize(scaleY: scale(a.height, b.height), scaleX: scale(a.width, b.width),
                                     centreOffset: o.halfPixelCenters ? 0.5 : 0))
    }

    mutating func planDepthToSpace(_ index: Int) throws {
        let input = try runtimeInput(index, 0), out = try output(index)
        guard case .depthToSpace(let block) = graph.nodes[index].options, block > 0 else {
            throw NNError.invalidGraph("\(graph.label(index)) lacks a block size")
        }
        let s = geometry(input)
        guard s.channels % (block * block) == 0 else {
            throw NNError.invalidGraph("\(graph.label(index)) has \(s.channels) channels for block \(block)")
        }
        try expect(index, out, NNTensorGeometry(height: s.height * block, width: s.width * block,
                                                channels: s.channels / (block * block)))
        steps.append(.depthToSpace(input: input, output: out, block: block))
    }
}
