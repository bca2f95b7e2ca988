/// A zero PAD of the channel tail only, read only by an ADD (whose other operand is not
/// such a PAD itself): the ADD reads the PAD's input and treats the missing channels as
/// zero (the residual of a block that widens its channels).
struct NNFoldChannelPad: NNFusionPass {
    let name = "fold channel PAD into ADD"

    func isEnabled(fuse: Bool, tuning: NNTuning) -> Bool { fuse }

    func apply(to planner: inout NNPlanner) throws { planner.foldChannelPads() }
}

extension NNPlanner {
    fileprivate mutating func foldChannelPads() {
        for (index, node) in graph.nodes.enumerated() {
            guard let (source, pads) = foldablePad(node), pads[2...5].allSatisfy({ $0 == 0 }), pads[6] == 0, pads[7] > 0,
                  let reader = soleConsumer(of: node.outputs[0]) else { continue }
            let padded = node.outputs[0], readerNode = graph.nodes[reader]
            guard readerNode.builtin == .add, readerNode.inputs.count == 2 else { continue }
            let other = readerNode.inputs[0] == padded ? readerNode.inputs[1] : readerNode.inputs[0]
            guard other != padded, channelPads[other] == nil else { continue }
            channelPads[padded] = source
            skipped.insert(index)
        }
    }
}
