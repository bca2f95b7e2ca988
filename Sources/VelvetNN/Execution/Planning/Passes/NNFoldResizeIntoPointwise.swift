/// RESIZE_BILINEARs read only by a 1x1, stride-1 convolution (the selfie decoder's
/// upsampling): the convolution reads the resize's input, resized, a launch and a
/// level fewer.
struct NNFoldResizeIntoPointwise: NNFusionPass {
    let name = "fold RESIZE_BILINEAR into 1x1 convolution"

    func isEnabled(fuse: Bool, tuning: NNTuning) -> Bool { fuse }

    func apply(to planner: inout NNPlanner) throws { try planner.foldResizesIntoPointwise() }
}

extension NNPlanner {
    fileprivate mutating func foldResizesIntoPointwise() throws {
        for (index, node) in graph.nodes.enumerated() where node.builtin == .resizeBilinear {
            guard node.outputs.count == 1, node.outputs[0] >= 0, let (input, resized, resize) = try? resizeParameters(index),
                  let reader = soleConsumer(of: resized), isPointwiseConv(reader), graph.nodes[reader].inputs.first == resized else { continue }
            resizedInputs[resized] = (input, resize)
            skipped.insert(index)
        }
    }
}
