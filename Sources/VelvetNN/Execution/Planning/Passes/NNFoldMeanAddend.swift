/// ADDs of two same-shape computed tensors, with no activation, whose output only a
/// global mean (an AVERAGE_POOL_2D over the whole tensor, or MEAN) reads.
struct NNFoldMeanAddend: NNFusionPass {
    let name = "fold ADD into global mean"

    func isEnabled(fuse: Bool, tuning: NNTuning) -> Bool { fuse }

    func apply(to planner: inout NNPlanner) throws { planner.foldMeanAddends() }
}

extension NNPlanner {
    fileprivate mutating func foldMeanAddends() {
        for (index, node) in graph.nodes.enumerated() where node.builtin == .add {
            guard case .add(activation: .none) = node.options, node.inputs.count == 2, node.outputs.count == 1,
                  let sum = node.outputs.first, sum >= 0, let reader = soleConsumer(of: sum),
                  graph.nodes[reader].builtin == .averagePool2D || graph.nodes[reader].builtin == .mean,
                  graph.nodes[reader].inputs.first == sum,
                  graph.nodes[reader].outputs.first.map({ geometry($0).pixels == 1 }) == true,
                  node.inputs.allSatisfy({ $0 >= 0 && graph.constants[$0] == nil && channelPads[$0] == nil
                                           && geometry($0) == geometry(sum) }) else { continue }
            if graph.nodes[reader].builtin == .averagePool2D {
                guard case .pool2D(let o) = graph.nodes[reader].options, o.activation == .none,
                      o.filterH == geometry(sum).height, o.filterW == geometry(sum).width else { continue }
            }
            meanAddends[sum] = (node.inputs[0], node.inputs[1])
            skipped.insert(index)
        }
    }
}
