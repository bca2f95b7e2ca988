/// Per-operator lowering: each operator the passes before it left becomes its step(s),
/// absorbing what follows it where the lowering decides (a convolution's epilogue, a
/// depthwise's 1x1 convolution, a mean's dense layers), then each graph output gets its
/// copy to the output buffer. Each step records the operator at whose place it runs.
struct NNLowerOperators: NNFusionPass {
    let name = "lower operators"

    func isEnabled(fuse: Bool, tuning: NNTuning) -> Bool { true }

    func apply(to planner: inout NNPlanner) throws {
        let graph = planner.graph
        for index in graph.nodes.indices where !planner.skipped.contains(index) {
            let planned = planner.steps.count
            planner.position = index
            try planner.plan(index)
            planner.positions += [Int](repeating: planner.position, count: planner.steps.count - planned)
        }
        guard planner.residualResizes.isEmpty, planner.meanAddends.isEmpty, planner.inputScales.isEmpty,
              planner.resizedInputs.isEmpty else {
            throw NNError.invalidGraph("an operator folded into a later one was never planned")
        }
        for (index, output) in graph.outputs.enumerated() {
            guard graph.constants[output] == nil else {
                throw NNError.unsupportedOperator("graph output \(graph.name(output)) is a constant")
            }
            planner.steps.append(.unpack(input: output, index: index, depthToSpace: nil))
            planner.positions.append(graph.nodes.count)
        }
    }
}

extension NNPlanner {
    /// Lowers operator `index` (not yet skipped) into its step(s).
    mutating func plan(_ index: Int) throws {
        let node = graph.nodes[index]
        switch node.kind {
        case .builtin(.conv2D): try planConv(index, depthwise: false)
        case .builtin(.depthwiseConv2D): try planConv(index, depthwise: true)
        case .custom("Convolution2DTransposeBias"): try planTransposeConv(index)
        case .builtin(.add): try planBinary(index, op: 1)
        case .builtin(.mul): try planBinary(index, op: 2)
        case .builtin(.relu), .builtin(.relu6), .builtin(.reluN1To1), .builtin(.tanh), .builtin(.logistic),
             .builtin(.hardSwish), .builtin(.prelu):
            let input = try runtimeInput(index, 0), out = try output(index)
            try expect(index, out, geometry(input))
            let activation = try standaloneActivation(index) ?? .none
            steps.append(.elementwise(input: input, output: out, op: 0, operand: nil, addend: nil, activation: activation))
        case .builtin(.maxPool2D), .builtin(.averagePool2D): try planPool(index)
        case .builtin(.mean): try planMean(index)
        case .builtin(.pad): try planPad(index)
        case .builtin(.reshape): try planReshape(index)
        case .builtin(.concatenation): try planConcatenation(index)
        case .builtin(.resizeBilinear): try planResize(index)
        case .builtin(.depthToSpace): try planDepthToSpace(index)
        default:
            throw NNError.unsupportedOperator("\(graph.label(index)) has no VelvetNN GPU kernel")
        }
    }
}
