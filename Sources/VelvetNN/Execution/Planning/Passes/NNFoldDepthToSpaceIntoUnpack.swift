/// A DEPTH_TO_SPACE whose output (or a RESHAPE of it) is only a graph output runs in
/// the copy to the output buffer instead of a launch of its own.
struct NNFoldDepthToSpaceIntoUnpack: NNFusionPass {
    let name = "fold DEPTH_TO_SPACE into output copy"

    func isEnabled(fuse: Bool, tuning: NNTuning) -> Bool { fuse }

    func apply(to planner: inout NNPlanner) throws { planner.foldDepthToSpaceIntoUnpacks() }
}

extension NNPlanner {
    fileprivate mutating func foldDepthToSpaceIntoUnpacks() {
        var folded: Set<Int> = []
        for (index, step) in steps.enumerated() {
            guard case .unpack(let input, let output, nil) = step else { continue }
            let written = root(input)
            guard let producer = steps.firstIndex(where: { $0.write == written }),
                  case .depthToSpace(let source, _, let block) = steps[producer],
                  onlyStep(index, reads: written) else { continue }
            steps[index] = .unpack(input: input, index: output, depthToSpace: NNDepthToSpace(source: source, output: written, block: block))
            folded.insert(producer)
        }
        removeSteps(folded)
    }
}
