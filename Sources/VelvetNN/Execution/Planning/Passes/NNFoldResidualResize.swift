/// RESIZE_BILINEARs whose output is only the residual of an ADD that a convolution
/// will absorb (its other operand is a CONV_2D's output read by nothing else): the
/// convolution's epilogue samples the resize's input instead, so the resize is skipped.
struct NNFoldResidualResize: NNFusionPass {
    let name = "fold residual RESIZE_BILINEAR into convolution epilogue"

    func isEnabled(fuse: Bool, tuning: NNTuning) -> Bool { fuse }

    func apply(to planner: inout NNPlanner) throws { try planner.foldResidualResizes() }
}

extension NNPlanner {
    fileprivate mutating func foldResidualResizes() throws {
        for (index, node) in graph.nodes.enumerated() where node.builtin == .resizeBilinear && !skipped.contains(index) {
            guard node.outputs.count == 1, node.outputs[0] >= 0, let add = soleConsumer(of: node.outputs[0]),
                  graph.nodes[add].builtin == .add, graph.nodes[add].inputs.count == 2,
                  graph.nodes[add].outputs.count == 1, graph.nodes[add].outputs[0] >= 0 else { continue }
            let resized = node.outputs[0]
            let other = graph.nodes[add].inputs[0] == resized ? graph.nodes[add].inputs[1] : graph.nodes[add].inputs[0]
            guard other != resized, other >= 0, let conv = producer[other], graph.nodes[conv].builtin == .conv2D,
                  soleConsumer(of: other) == add, index < add,
                  geometry(other) == geometry(resized), geometry(graph.nodes[add].outputs[0]) == geometry(other),
                  let (input, _, resize) = try? resizeParameters(index) else { continue }
            residualResizes[resized] = (input, resize)
            skipped.insert(index)
        }
    }
}
