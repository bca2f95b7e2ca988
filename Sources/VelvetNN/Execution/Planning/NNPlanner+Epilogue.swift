/// A lowered convolution's epilogue: the activations, residual ADD and pooled or resized
/// residual it absorbs from the operators that follow it (decided while the convolution is
/// lowered, since they change the step it emits).

extension NNPlanner {
    /// Follows the chain of sole consumers of a convolution's output, absorbing
    /// activations and at most one residual ADD. Returns the tensor the fused step writes.
    mutating func absorbFollowers(output: Int, epilogue: inout NNEpilogue,
                                  allowResidual: Bool, allowPooledResidual: Bool = false) throws -> Int {
        let start = position
        var current = output
        // 0: nothing after bias, 1: act1 set, 2: residual added, 3: act2 set.
        var stage = epilogue.act1 == .none ? 0 : 1
        while let next = soleConsumer(of: current) {
            let nextNode = graph.nodes[next]
            guard nextNode.outputs.count == 1, nextNode.outputs[0] >= 0 else { break }
            if isActivation(next), nextNode.inputs.first == current, stage == 0 || stage == 2 {
                guard let activation = try standaloneActivation(next) else { break }
                if stage == 0 { epilogue.act1 = activation; stage = 1 } else { epilogue.act2 = activation; stage = 3 }
            } else if allowResidual, nextNode.builtin == .add, stage < 2, nextNode.inputs.count == 2 {
                let otherSlot = nextNode.inputs[0] == current ? 1 : 0
                let other = nextNode.inputs[otherSlot]
                guard other != current, other >= 0, graph.constants[other] == nil else { break }
                let residual = channelPads[other] ?? other
                let shape = geometry(residual), target = geometry(current)
                guard available(residual, before: next), shape.height == target.height, shape.width == target.width,
                      shape.channels <= target.channels,
                      geometry(nextNode.outputs[0]) == target else { break }
                epilogue.residual = residual
                if let folded = residualResizes.removeValue(forKey: residual) {
                    epilogue.residual = folded.source
                    epilogue.residualResize = folded.resize
                } else if allowPooledResidual, let pool = try fusablePool(producing: residual, after: start, before: next) {
                    epilogue.residual = pool.source
                    epilogue.residualPool = pool.window
                    skipped.insert(pool.node)
                }
                epilogue.act2 = try fusedActivation(next)
                stage = epilogue.act2 == .none ? 2 : 3
            } else {
                break
            }
            skipped.insert(next)
            position = next
            current = nextNode.outputs[0]
        }
        return current
    }

    /// The MAX_POOL producing `tensor`, when a convolution's epilogue can compute it while
    /// reading its input instead: a k x k window with stride k and no padding before, no
    /// activation, `tensor` read by nothing else, the pool planned after the convolution
    /// (so not yet run) and its input ready before the fused ADD.
    func fusablePool(producing tensor: Int, after start: Int, before add: Int) throws -> (node: Int, source: Int, window: Int)? {
        guard let node = producer[tensor], node > start, node < add, graph.nodes[node].builtin == .maxPool2D,
              !graphOutputs.contains(tensor), consumers[tensor]?.count == 1,
              case .pool2D(let o) = graph.nodes[node].options, o.filterH == o.filterW, o.strideH == o.filterH,
              o.strideW == o.filterW, o.filterH >= 2, try fusedActivation(node) == .none,
              let source = graph.nodes[node].inputs.first, source >= 0, graph.constants[source] == nil,
              available(source, before: add) else { return nil }
        let shape = geometry(source)
        guard Self.padding(o.padding, input: shape.height, kernel: o.filterH, stride: o.strideH).before == 0,
              Self.padding(o.padding, input: shape.width, kernel: o.filterW, stride: o.strideW).before == 0 else { return nil }
        return (node, source, o.filterH)
    }
}
