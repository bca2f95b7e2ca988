/// A depthwise step whose output only a graph output's copy reads (directly, or through
/// a folded DEPTH_TO_SPACE) writes the output buffer itself (the full-range detector's
/// heads).
struct NNFoldUnpackIntoDepthwise: NNFusionPass {
    let name = "fold output copy into depthwise"

    func isEnabled(fuse: Bool, tuning: NNTuning) -> Bool { fuse }

    func apply(to planner: inout NNPlanner) throws { planner.foldUnpacksIntoDepthwise() }
}

extension NNPlanner {
    fileprivate mutating func foldUnpacksIntoDepthwise() {
        var folded: Set<Int> = []
        for (index, step) in steps.enumerated() {
            guard case .unpack(let input, let output, let depthToSpace) = step else { continue }
            let source = depthToSpace?.source ?? input
            guard depthToSpace != nil || aliases[input] == nil,
                  let producer = steps.firstIndex(where: { $0.write == source }), case .depthwise(let c) = steps[producer],
                  onlyStep(index, reads: source) else { continue }
            steps[producer] = .depthwiseToOutput(c, output: NNDenseOutput(index: output, block: depthToSpace?.block ?? 1))
            folded.insert(index)
        }
        removeSteps(folded)
    }
}
