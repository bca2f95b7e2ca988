/// A zero PAD of height and width only, read only by a convolution's input: the convolution
/// reads the PAD's input with the padding added to its own, a launch fewer.
struct NNFoldSpatialPad: NNFusionPass {
    let name = "fold spatial PAD into convolution"

    func isEnabled(fuse: Bool, tuning: NNTuning) -> Bool { fuse }

    func apply(to planner: inout NNPlanner) throws { planner.foldSpatialPads() }
}

extension NNPlanner {
    fileprivate mutating func foldSpatialPads() {
        for (index, node) in graph.nodes.enumerated() {
            guard let (source, pads) = foldablePad(node), pads[6] == 0, pads[7] == 0,
                  let reader = soleConsumer(of: node.outputs[0]) else { continue }
            let readerNode = graph.nodes[reader]
            guard readerNode.builtin == .conv2D || readerNode.builtin == .depthwiseConv2D,
                  readerNode.inputs.first == node.outputs[0] else { continue }
            spatialPads[node.outputs[0]] = (source, pads[2], pads[4])
            skipped.insert(index)
        }
    }

    /// A PAD of a computed 4D tensor by constant non-negative amounts, none on the batch
    /// axis: its input and its paddings (before, after per axis).
    func foldablePad(_ node: NNGraph.Node) -> (source: Int, pads: [Int])? {
        guard node.builtin == .pad, node.inputs.count >= 2, node.outputs.count == 1, node.inputs[0] >= 0,
              graph.constants[node.inputs[0]] == nil,
              let pads = graph.constants[node.inputs[1]]?.ints, pads.count == 8,
              graph.tensors[node.inputs[0]].shape.count == 4,
              pads.allSatisfy({ $0 >= 0 }), pads[0] == 0, pads[1] == 0 else { return nil }
        return (node.inputs[0], pads)
    }
}
