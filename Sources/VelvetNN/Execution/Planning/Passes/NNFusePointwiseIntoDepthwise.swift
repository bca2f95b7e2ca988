/// A 1x1 convolution (stride 1, its epilogue an activation at most) whose output only a
/// depthwise convolution (square, no residual) reads runs in the depthwise's launch,
/// where the depthwise ran.
struct NNFusePointwiseIntoDepthwise: NNFusionPass {
    let name = "fuse 1x1 convolution into depthwise"

    func isEnabled(fuse: Bool, tuning: NNTuning) -> Bool { fuse && tuning.fusePointwiseDepthwise }

    func apply(to planner: inout NNPlanner) throws { planner.fusePointwiseIntoDepthwise() }
}

extension NNPlanner {
    fileprivate mutating func fusePointwiseIntoDepthwise() {
        var removed: Set<Int> = []
        for (index, step) in steps.enumerated() {
            let depthwise: NNConvolution, output: NNDenseOutput?
            switch step {
            case .depthwise(let d): (depthwise, output) = (d, nil)
            case .depthwiseToOutput(let d, let o): (depthwise, output) = (d, o)
            default: continue
            }
            let mid = geometry(depthwise.input)
            guard depthwise.epilogue.residual == nil, depthwise.kernelH == depthwise.kernelW, depthwise.strideY == depthwise.strideX,
                  !graphOutputs.contains(depthwise.input),
                  let producer = steps.firstIndex(where: { $0.write == depthwise.input }), !removed.contains(producer),
                  case .conv(let pointwise) = steps[producer], pointwise.kernelH == 1, pointwise.kernelW == 1,
                  pointwise.strideY == 1, pointwise.strideX == 1, pointwise.padTop == 0, pointwise.padLeft == 0,
                  pointwise.inputScale == nil, pointwise.inputResize == nil, pointwise.epilogue.residual == nil,
                  onlyStep(index, reads: depthwise.input),
                  tuning.pointwiseDepthwiseTiling(height: geometry(depthwise.output).height, width: geometry(depthwise.output).width,
                                                  inputGroups: geometry(pointwise.input).groups, groups: mid.groups,
                                                  kernel: depthwise.kernelH, stride: depthwise.strideY) != nil else { continue }
            steps[index] = .pointwiseDepthwise(pointwise: pointwise, depthwise: depthwise, output: output)
            removed.insert(producer)
        }
        removeSteps(removed)
    }
}
