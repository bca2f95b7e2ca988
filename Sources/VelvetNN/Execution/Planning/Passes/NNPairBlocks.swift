/// Pairs of depthwise+1x1 steps where the first one's output is read only by the
/// second's depthwise (stride 1, square kernel) become one launch, run where the second
/// was. The first block has no residual; the second's is read as is.
struct NNPairBlocks: NNFusionPass {
    let name = "pair depthwise+1x1 blocks"

    func isEnabled(fuse: Bool, tuning: NNTuning) -> Bool { fuse && tuning.fuseBlockPairs }

    func apply(to planner: inout NNPlanner) throws { planner.pairBlocks() }
}

extension NNPlanner {
    fileprivate mutating func pairBlocks() {
        var removed: Set<Int> = []
        for (index, step) in steps.enumerated() where !removed.contains(index) {
            guard case .depthwisePointwise(let dA, let pA) = step, pA.epilogue.residual == nil,
                  pA.epilogue.act2 == .none, pA.inputScale == nil, dA.strideY == dA.strideX, dA.kernelH == dA.kernelW,
                  !graphOutputs.contains(pA.output) else { continue }
            let readers = steps.indices.filter { steps[$0].reads.map(root).contains(pA.output) }
            guard readers.count == 1, let second = readers.first, second > index, !removed.contains(second),
                  case .depthwisePointwise(let dB, let pB) = steps[second], dB.input == pA.output,
                  dB.strideY == 1, dB.strideX == 1, dB.kernelH == dB.kernelW, dB.kernelH % 2 == 1,
                  dB.padTop == dB.kernelH / 2, dB.padLeft == dB.kernelW / 2,
                  pB.epilogue.residualPool == 0, pB.epilogue.residualResize == nil, pB.inputScale == nil,
                  tuning.blockPairTile(firstGroups: geometry(dA.input).groups, middleGroups: geometry(pA.output).groups,
                                       secondKernel: dB.kernelH, height: geometry(pB.output).height,
                                       width: geometry(pB.output).width) != nil else { continue }
            steps[second] = .blockPair(first: NNBlock(depthwise: dA, pointwise: pA), second: NNBlock(depthwise: dB, pointwise: pB))
            removed.insert(index)
        }
        removeSteps(removed)
    }
}
