/// Turns an `NNGraph` into kernel launches: checks every operator and shape, packs the
/// constants for the kernels, and (when `fuse` is on) fuses what is cheap to fuse:
/// bias and activations into convolutions, a residual ADD (with its activation) into
/// the convolution feeding it, a channel zero-PAD into the ADD reading it, and a
/// spatial zero-PAD into the convolution reading it, and a depthwise convolution into
/// the 1x1 convolution reading it. Fusion keeps the arithmetic of the unfused ops, up to
/// the order in which a convolution's terms are added.
struct NNPlanner {
    let graph: NNGraph
    let fuse: Bool
    let tuning: NNTuning

    /// Launches in execution order (after `run`).
    private(set) var steps: [NNStep] = []
    /// For each step, the graph operator at whose place it runs: a fused chain runs
    /// where its last operator was, so a residual computed after the convolution
    /// (the mesh computes the skip path's max-pool after the block's conv) is ready.
    private var positions: [Int] = []
    /// Packed constants (a multiple of 4 floats: vec4s).
    private(set) var constantData: [Float] = [0, 0, 0, 0]
    /// RESHAPE outputs that share their input's memory: output -> input.
    private(set) var aliases: [Int: Int] = [:]

    private var producer: [Int: Int] = [:]
    private var consumers: [Int: [Int]] = [:]
    private var graphOutputs: Set<Int> = []
    private var skipped: Set<Int> = []
    /// PAD outputs read in place: the PAD's input and its before-padding (top, left).
    private var spatialPads: [Int: (source: Int, top: Int, left: Int)] = [:]
    /// MUL outputs a CONV_2D reads by scaling the MUL's input: output -> the input and the
    /// [1,1,1,C] gate.
    private var inputScales: [Int: (source: Int, gate: Int)] = [:]
    /// ADD outputs read only by a global mean, which sums the ADD's operands itself:
    /// output -> the operands.
    private var meanAddends: [Int: (Int, Int)] = [:]
    /// RESIZE_BILINEAR outputs a convolution's epilogue samples in place: output -> the
    /// resize's input and parameters.
    private var residualResizes: [Int: (source: Int, resize: NNResize)] = [:]
    /// Channel-tail PAD outputs read in place by an ADD: output -> the PAD's input.
    private var channelPads: [Int: Int] = [:]
    /// RESIZE_BILINEAR outputs a 1x1 CONV_2D reads through the resize: output -> the
    /// resize's input and parameters.
    private var resizedInputs: [Int: (source: Int, resize: NNResize)] = [:]

    init(graph: NNGraph, fuse: Bool, tuning: NNTuning = .gpu) {
        self.graph = graph
        self.fuse = fuse
        self.tuning = tuning
    }

    mutating func run() throws {
        try validateTensors()
        for (index, node) in graph.nodes.enumerated() {
            for input in node.inputs where input >= 0 && graph.constants[input] == nil {
                consumers[input, default: []].append(index)
            }
            for output in node.outputs where output >= 0 { producer[output] = index }
        }
        graphOutputs = Set(graph.outputs)
        if fuse {
            try findFoldablePads()
            try findResizesBeforePointwiseConvs()
            try findFoldableResizes()
            findMeanAddends()
        }
        for index in graph.nodes.indices where !skipped.contains(index) {
            let planned = steps.count
            position = index
            try plan(index)
            positions += [Int](repeating: position, count: steps.count - planned)
        }
        guard residualResizes.isEmpty, meanAddends.isEmpty, inputScales.isEmpty, resizedInputs.isEmpty else {
            throw NNError.invalidGraph("an operator folded into a later one was never planned")
        }
        for (index, output) in graph.outputs.enumerated() {
            guard graph.constants[output] == nil else {
                throw NNError.unsupportedOperator("graph output \(graph.name(output)) is a constant")
            }
            steps.append(.unpack(input: output, index: index, depthToSpace: nil))
            positions.append(graph.nodes.count)
        }
        if fuse {
            foldDepthToSpaceIntoUnpacks()
            foldUnpacksIntoDepthwise()
            if tuning.fusePointwiseDepthwise { fusePointwiseIntoDepthwise() }
        }
        if fuse && tuning.fuseBlockPairs { pairBlocks() }
        steps = zip(steps, positions).enumerated()
            .sorted { ($0.element.1, $0.offset) < ($1.element.1, $1.offset) }
            .map(\.element.0)
    }

    /// A DEPTH_TO_SPACE whose output (or a RESHAPE of it) is only a graph output runs in
    /// the copy to the output buffer instead of a launch of its own.
    private mutating func foldDepthToSpaceIntoUnpacks() {
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

    /// Drops the steps at `indices` (folded into others) and their positions.
    private mutating func removeSteps(_ indices: Set<Int>) {
        let kept = steps.indices.filter { !indices.contains($0) }
        steps = kept.map { steps[$0] }
        positions = kept.map { positions[$0] }
    }

    /// The tensor whose memory `tensor` shares (itself unless it is a RESHAPE's output).
    private func root(_ tensor: Int) -> Int {
        var t = tensor
        while let next = aliases[t] { t = next }
        return t
    }

    /// Whether step `index` is the only step reading `tensor` (directly or through an alias).
    private func onlyStep(_ index: Int, reads tensor: Int) -> Bool {
        steps.enumerated().allSatisfy { $0.offset == index || !$0.element.reads.map(root).contains(tensor) }
    }

    /// A depthwise step whose output only a graph output's copy reads (directly, or through
    /// a folded DEPTH_TO_SPACE) writes the output buffer itself (the full-range detector's
    /// heads).
    private mutating func foldUnpacksIntoDepthwise() {
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

    /// A 1x1 convolution (stride 1, its epilogue an activation at most) whose output only a
    /// depthwise convolution (square, no residual) reads runs in the depthwise's launch,
    /// where the depthwise ran.
    private mutating func fusePointwiseIntoDepthwise() {
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

    /// Pairs of depthwise+1x1 steps where the first one's output is read only by the
    /// second's depthwise (stride 1, square kernel) become one launch, run where the second
    /// was. The first block has no residual; the second's is read as is.
    private mutating func pairBlocks() {
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

    /// Where the step being planned runs; fusion moves it to the last operator absorbed.
    private var position = 0

    // MARK: - Shapes

    func geometry(_ tensor: Int) -> NNTensorGeometry { NNTensorGeometry(shape: graph.tensors[tensor].shape) }

    private func validateTensors() throws {
        for index in graph.inputs {
            guard index >= 0, index < graph.tensors.count else {
                throw NNError.invalidGraph("graph input \(index) is not a tensor")
            }
        }
        for node in graph.nodes {
            for t in node.inputs + node.outputs where t >= graph.tensors.count {
                throw NNError.invalidGraph("an operator refers to tensor \(t) of \(graph.tensors.count)")
            }
        }
        let runtime = Set(graph.inputs + graph.nodes.flatMap { $0.inputs + $0.outputs }.filter { $0 >= 0 })
            .filter { graph.constants[$0] == nil }
        for t in runtime.sorted() where !NNTensorGeometry.isSupported(graph.tensors[t].shape) {
            throw NNError.unsupportedOperator("\(graph.name(t)) has shape \(graph.tensors[t].shape); VelvetNN runs batch-1 tensors of rank 1 to 4")
        }
    }

    private func runtimeInput(_ node: Int, _ slot: Int) throws -> Int {
        let inputs = graph.nodes[node].inputs
        guard slot < inputs.count, inputs[slot] >= 0 else {
            throw NNError.invalidGraph("\(graph.label(node)) lacks input \(slot)")
        }
        let tensor = inputs[slot]
        guard graph.constants[tensor] == nil else {
            throw NNError.unsupportedOperator("\(graph.label(node)) has a constant \(graph.name(tensor)) where VelvetNN needs a computed tensor")
        }
        return tensor
    }

    private func constant(_ node: Int, _ slot: Int) throws -> (values: NNGraph.Constant, shape: [Int])? {
        let inputs = graph.nodes[node].inputs
        guard slot < inputs.count, inputs[slot] >= 0 else { return nil }
        guard let value = graph.constants[inputs[slot]] else {
            throw NNError.unsupportedOperator("\(graph.label(node)) computes \(graph.name(inputs[slot])) at run time; VelvetNN needs it constant")
        }
        return (value, graph.tensors[inputs[slot]].shape)
    }

    private func floats(_ node: Int, _ slot: Int, count: Int, what: String) throws -> [Float] {
        guard let (value, _) = try constant(node, slot), let values = value.floats else {
            throw NNError.invalidGraph("\(graph.label(node)) lacks float \(what)")
        }
        guard values.count == count else {
            throw NNError.invalidGraph("\(graph.label(node)) has \(values.count) \(what) values, expected \(count)")
        }
        return values
    }

    private func output(_ node: Int) throws -> Int {
        let outputs = graph.nodes[node].outputs
        guard outputs.count == 1, outputs[0] >= 0 else {
            throw NNError.unsupportedOperator("\(graph.label(node)) has \(outputs.count) outputs; VelvetNN runs single-output operators")
        }
        return outputs[0]
    }

    private func expect(_ node: Int, _ tensor: Int, _ shape: NNTensorGeometry) throws {
        guard geometry(tensor) == shape else {
            let actual = geometry(tensor)
            throw NNError.invalidGraph("\(graph.label(node)) should produce \(shape.height)x\(shape.width)x\(shape.channels), but \(graph.name(tensor)) is \(actual.height)x\(actual.width)x\(actual.channels)")
        }
    }

    /// TensorFlow's padding: SAME pads max((out-1)*s + k - in, 0), the smaller half first.
    static func padding(_ padding: TFLitePadding, input: Int, kernel: Int, stride: Int) -> (output: Int, before: Int) {
        switch padding {
        case .same:
            let output = (input + stride - 1) / stride
            return (output, max((output - 1) * stride + kernel - input, 0) / 2)
        case .valid:
            return ((input - kernel) / stride + 1, 0)
        }
    }

    // MARK: - Constants

    /// Appends vec4-aligned floats; returns their vec4 offset.
    private mutating func appendConstants(_ values: [Float]) -> Int {
        let offset = constantData.count / 4
        constantData += values
        while constantData.count % 4 != 0 { constantData.append(0) }
        return offset
    }

    /// A per-channel vector, zero-padded to whole vec4s.
    private mutating func appendChannelVector(_ values: [Float], channels: Int) -> Int {
        appendConstants(values.count == 1 ? [Float](repeating: values[0], count: channels) : values)
    }

    /// OHWI weights -> per output group, [ky][kx][input group][input lane] vec4s of 4 output channels.
    private mutating func appendConvWeights(_ w: [Float], outC: Int, kh: Int, kw: Int, inC: Int) -> Int {
        let outGroups = (outC + 3) / 4, inGroups = (inC + 3) / 4
        var packed = [Float](repeating: 0, count: outGroups * kh * kw * inGroups * 16)
        var index = 0
        for og in 0..<outGroups {
            for ky in 0..<kh {
                for kx in 0..<kw {
                    for ig in 0..<inGroups {
                        for il in 0..<4 {
                            for ol in 0..<4 {
                                let o = og * 4 + ol, i = ig * 4 + il
                                if o < outC && i < inC { packed[index] = w[((o * kh + ky) * kw + kx) * inC + i] }
                                index += 1
                            }
                        }
                    }
                }
            }
        }
        return appendConstants(packed)
    }

    private mutating func appendBias(_ node: Int, slot: Int, channels: Int) throws -> Int {
        let inputs = graph.nodes[node].inputs
        guard slot < inputs.count, inputs[slot] >= 0 else {
            return appendConstants([Float](repeating: 0, count: channels))
        }
        return appendChannelVector(try floats(node, slot, count: channels, what: "bias"), channels: channels)
    }

    // MARK: - Activations

    private func fusedActivation(_ node: Int) throws -> NNActivation {
        switch graph.nodes[node].options.activation ?? .none {
        case .none: return .none
        case .relu: return .relu
        case .relu6: return .relu6
        case .reluN1To1: return .reluN1To1
        case .tanh: return .tanh
        case .signBit: throw NNError.unsupportedOperator("\(graph.label(node)) has fused activation SIGN_BIT")
        }
    }

    /// The activation a standalone activation operator applies, or nil for other operators.
    private mutating func standaloneActivation(_ node: Int) throws -> NNActivation? {
        switch graph.nodes[node].builtin {
        case .relu?: return .relu
        case .relu6?: return .relu6
        case .reluN1To1?: return .reluN1To1
        case .tanh?: return .tanh
        case .logistic?: return .logistic
        case .hardSwish?: return .hardSwish
        case .prelu?:
            let channels = geometry(try runtimeInput(node, 0)).channels
            guard let (value, shape) = try constant(node, 1), let alpha = value.floats,
                  alpha.count == channels || alpha.count == 1 else {
                throw NNError.unsupportedOperator("\(graph.label(node)) needs a constant per-channel alpha (\(channels) values)")
            }
            _ = shape
            return .prelu(alphaOffset: appendChannelVector(alpha, channels: channels))
        default: return nil
        }
    }

    private func isActivation(_ node: Int) -> Bool {
        switch graph.nodes[node].builtin {
        case .relu?, .relu6?, .reluN1To1?, .tanh?, .logistic?, .hardSwish?, .prelu?: return true
        default: return false
        }
    }

    /// The single operator reading `tensor`, when nothing else (including the graph's
    /// outputs) needs the tensor itself.
    private func soleConsumer(of tensor: Int) -> Int? {
        guard fuse, !graphOutputs.contains(tensor), let readers = consumers[tensor], readers.count == 1,
              !skipped.contains(readers[0]) else { return nil }
        return readers[0]
    }

    /// Whether `tensor` is ready before operator `node` runs.
    private func available(_ tensor: Int, before node: Int) -> Bool {
        if graph.inputs.contains(tensor) { return true }
        guard let p = producer[tensor] else { return false }
        return p < node
    }

    // MARK: - Fusion

    private mutating func findFoldablePads() throws {
        for (index, node) in graph.nodes.enumerated() where node.builtin == .pad {
            guard node.inputs.count >= 2, node.outputs.count == 1, node.inputs[0] >= 0,
                  graph.constants[node.inputs[0]] == nil,
                  let pads = graph.constants[node.inputs[1]]?.ints, pads.count == 8,
                  graph.tensors[node.inputs[0]].shape.count == 4,
                  pads.allSatisfy({ $0 >= 0 }), pads[0] == 0, pads[1] == 0 else { continue }
            let padded = node.outputs[0]
            guard let reader = soleConsumer(of: padded) else { continue }
            let readerNode = graph.nodes[reader]
            let spatialOnly = pads[6] == 0 && pads[7] == 0
            let channelTail = pads[2...5].allSatisfy { $0 == 0 } && pads[6] == 0 && pads[7] > 0
            if spatialOnly, readerNode.builtin == .conv2D || readerNode.builtin == .depthwiseConv2D,
               readerNode.inputs.first == padded {
                spatialPads[padded] = (node.inputs[0], pads[2], pads[4])
                skipped.insert(index)
            } else if channelTail, readerNode.builtin == .add, readerNode.inputs.count == 2 {
                let other = readerNode.inputs[0] == padded ? readerNode.inputs[1] : readerNode.inputs[0]
                guard other != padded, channelPads[other] == nil else { continue }
                channelPads[padded] = node.inputs[0]
                skipped.insert(index)
            }
        }
    }

    /// Follows the chain of sole consumers of a convolution's output, absorbing
    /// activations and at most one residual ADD. Returns the tensor the fused step writes.
    private mutating func absorbFollowers(output: Int, epilogue: inout NNEpilogue,
                                          allowResidual: Bool, allowPooledResidual: Bool = false) throws -> Int {
        let start = position
        var current = output
        // 0: nothing after bias, 1: act1 set, 2: residual added, 3: act2 set.
        var stage = epilogue.act1 == .none ? 0 : 1
        while let next = soleConsumer(of: current) {
            let nextNode = graph.nodes[next]
            guard nextNode.outputs.count == 1, nextNode.outputs[0] >= 0 else { break }
            if isActivation(next), nextNode.inputs.first == current, stage == 0 || stage == 2 {
                guard let activation = try standaloneActivation(next) else { break }
                if stage == 0 { epilogue.act1 = activation; stage = 1 } else { epilogue.act2 = activation; stage = 3 }
            } else if allowResidual, nextNode.builtin == .add, stage < 2, nextNode.inputs.count == 2 {
                let otherSlot = nextNode.inputs[0] == current ? 1 : 0
                let other = nextNode.inputs[otherSlot]
                guard other != current, other >= 0, graph.constants[other] == nil else { break }
                let residual = channelPads[other] ?? other
                let shape = geometry(residual), target = geometry(current)
                guard available(residual, before: next), shape.height == target.height, shape.width == target.width,
                      shape.channels <= target.channels,
                      geometry(nextNode.outputs[0]) == target else { break }
                epilogue.residual = residual
                if let folded = residualResizes.removeValue(forKey: residual) {
                    epilogue.residual = folded.source
                    epilogue.residualResize = folded.resize
                } else if allowPooledResidual, let pool = try fusablePool(producing: residual, after: start, before: next) {
                    epilogue.residual = pool.source
                    epilogue.residualPool = pool.window
                    skipped.insert(pool.node)
                }
                epilogue.act2 = try fusedActivation(next)
                stage = epilogue.act2 == .none ? 2 : 3
            } else {
                break
            }
            skipped.insert(next)
            position = next
            current = nextNode.outputs[0]
        }
        return current
    }

    /// The MAX_POOL producing `tensor`, when a convolution's epilogue can compute it while
    /// reading its input instead: a k x k window with stride k and no padding before, no
    /// activation, `tensor` read by nothing else, the pool planned after the convolution
    /// (so not yet run) and its input ready before the fused ADD.
    private func fusablePool(producing tensor: Int, after start: Int, before add: Int) throws -> (node: Int, source: Int, window: Int)? {
        guard let node = producer[tensor], node > start, node < add, graph.nodes[node].builtin == .maxPool2D,
              !graphOutputs.contains(tensor), consumers[tensor]?.count == 1,
              case .pool2D(let o) = graph.nodes[node].options, o.filterH == o.filterW, o.strideH == o.filterH,
              o.strideW == o.filterW, o.filterH >= 2, try fusedActivation(node) == .none,
              let source = graph.nodes[node].inputs.first, source >= 0, graph.constants[source] == nil,
              available(source, before: add) else { return nil }
        let shape = geometry(source)
        guard Self.padding(o.padding, input: shape.height, kernel: o.filterH, stride: o.strideH).before == 0,
              Self.padding(o.padding, input: shape.width, kernel: o.filterW, stride: o.strideW).before == 0 else { return nil }
        return (node, source, o.filterH)
    }

    // MARK: - Operators

    private mutating func plan(_ index: Int) throws {
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

    private mutating func planConv(_ index: Int, depthwise: Bool) throws {
        let convolution = try makeConvolution(index, depthwise: depthwise)
        if depthwise, let pointwise = try pointwiseAfter(convolution) {
            steps.append(.depthwisePointwise(depthwise: convolution, pointwise: pointwise))
        } else {
            steps.append(depthwise ? .depthwise(convolution) : .conv(convolution))
        }
    }

    /// The 1x1 convolution reading a depthwise convolution's output, planned to run in the
    /// same launch: the depthwise output feeds nothing else, and the depthwise's epilogue is
    /// an activation at most (the pair runs where the 1x1's fused chain ends).
    private mutating func pointwiseAfter(_ depthwise: NNConvolution) throws -> NNConvolution? {
        guard fuse, tuning.fuseDepthwisePointwise, depthwise.epilogue.residual == nil, depthwise.epilogue.act2 == .none,
              let next = soleConsumer(of: depthwise.output), graph.nodes[next].builtin == .conv2D,
              graph.nodes[next].inputs.first == depthwise.output, spatialPads[depthwise.output] == nil,
              NNTuning.depthwisePointwiseFits(middleGroups: geometry(depthwise.output).groups),
              let (_, shape) = try constant(next, 1), shape.count == 4, shape[1] == 1, shape[2] == 1,
              case .conv2D(let o) = graph.nodes[next].options, o.strideH == 1, o.strideW == 1,
              o.dilationH == 1, o.dilationW == 1 else { return nil }
        position = next
        skipped.insert(next)
        return try makeConvolution(next, depthwise: false)
    }

    /// Plans a CONV_2D or DEPTHWISE_CONV_2D with whatever follows it fused in.
    private mutating func makeConvolution(_ index: Int, depthwise: Bool, allowResidual: Bool = true) throws -> NNConvolution {
        let node = graph.nodes[index]
        var input = try runtimeInput(index, 0)
        let out = try output(index)
        guard let (weightValue, wShape) = try constant(index, 1), let weights = weightValue.floats, wShape.count == 4 else {
            throw NNError.invalidGraph("\(graph.label(index)) lacks 4D float weights")
        }
        let padding: TFLitePadding, strideY: Int, strideX: Int, dilations: (Int, Int)
        switch node.options {
        case .conv2D(let o): (padding, strideY, strideX, dilations) = (o.padding, o.strideH, o.strideW, (o.dilationH, o.dilationW))
        case .depthwiseConv2D(let o):
            (padding, strideY, strideX, dilations) = (o.padding, o.strideH, o.strideW, (o.dilationH, o.dilationW))
        default: throw NNError.invalidGraph("\(graph.label(index)) lacks convolution options")
        }
        guard dilations == (1, 1) else {
            throw NNError.unsupportedOperator("\(graph.label(index)) uses dilation \(dilations.0)x\(dilations.1)")
        }
        guard strideY > 0, strideX > 0 else { throw NNError.invalidGraph("\(graph.label(index)) has stride \(strideY)x\(strideX)") }
        // A folded spatial PAD: read its input, with its padding added to ours.
        var extraTop = 0, extraLeft = 0
        let paddedShape = geometry(input)
        if let folded = spatialPads[input] {
            (input, extraTop, extraLeft) = (folded.source, folded.top, folded.left)
        }
        // A folded RESIZE_BILINEAR before a 1x1 convolution: read its input, resized.
        let resizedInput = depthwise ? nil : resizedInputs.removeValue(forKey: input)
        if let resizedInput { input = resizedInput.source }
        let inShape = geometry(input)
        let kh = wShape[1], kw = wShape[2]
        let outChannels = geometry(out).channels
        if depthwise {
            guard wShape[0] == 1, wShape[3] == inShape.channels, outChannels == inShape.channels else {
                throw NNError.unsupportedOperator("\(graph.label(index)) has weights \(wShape) for \(inShape.channels) channels; only depth multiplier 1 is supported")
            }
        } else {
            guard wShape[3] == inShape.channels, wShape[0] == outChannels else {
                throw NNError.invalidGraph("\(graph.label(index)) has weights \(wShape) for \(inShape.channels) -> \(outChannels) channels")
            }
        }
        let vertical = Self.padding(padding, input: paddedShape.height, kernel: kh, stride: strideY)
        let horizontal = Self.padding(padding, input: paddedShape.width, kernel: kw, stride: strideX)
        guard vertical.output > 0, horizontal.output > 0 else {
            throw NNError.invalidGraph("\(graph.label(index)) has a \(kh)x\(kw) kernel larger than its input")
        }
        try expect(index, out, NNTensorGeometry(height: vertical.output, width: horizontal.output, channels: outChannels))

        let weightOffset: Int
        if depthwise {
            // [1, KH, KW, C] -> per tap, one vec4 per channel group: neighbouring invocations
            // (neighbouring groups) read neighbouring weights.
            let groups = (outChannels + 3) / 4
            var packed = [Float](repeating: 0, count: groups * kh * kw * 4)
            for tap in 0..<(kh * kw) {
                for c in 0..<outChannels {
                    packed[tap * groups * 4 + c] = weights[tap * outChannels + c]
                }
            }
            weightOffset = appendConstants(packed)
        } else {
            weightOffset = appendConvWeights(weights, outC: outChannels, kh: kh, kw: kw, inC: inShape.channels)
        }
        let biasOffset = try appendBias(index, slot: 2, channels: outChannels)
        var convolution = NNConvolution(input: input, output: out, weightOffset: weightOffset, biasOffset: biasOffset,
                                        kernelH: kh, kernelW: kw, strideY: strideY, strideX: strideX,
                                        padTop: vertical.before + extraTop, padLeft: horizontal.before + extraLeft)
        convolution.inputResize = resizedInput?.resize
        if !depthwise, let scaled = inputScales.removeValue(forKey: input) {
            convolution.input = scaled.source
            convolution.inputScale = scaled.gate
        }
        convolution.epilogue.act1 = try fusedActivation(index)
        convolution.output = try absorbFollowers(output: out, epilogue: &convolution.epilogue, allowResidual: allowResidual,
                                                 allowPooledResidual: !depthwise)
        return convolution
    }

    private mutating func planTransposeConv(_ index: Int) throws {
        let node = graph.nodes[index]
        let input = try runtimeInput(index, 0), out = try output(index)
        guard let bytes = node.customOptions else {
            throw NNError.invalidGraph("\(graph.label(index)) lacks its TfLiteTransposeConvParams")
        }
        let params = try TFLiteTransposeConvParams(rawCustomOptions: bytes)
        guard let (weightValue, wShape) = try constant(index, 1), let weights = weightValue.floats, wShape.count == 4 else {
            throw NNError.invalidGraph("\(graph.label(index)) lacks 4D float weights")
        }
        let inShape = geometry(input), outShape = geometry(out)
        let kh = wShape[1], kw = wShape[2]
        guard wShape[3] == inShape.channels, wShape[0] == outShape.channels else {
            throw NNError.invalidGraph("\(graph.label(index)) has weights \(wShape) for \(inShape.channels) -> \(outShape.channels) channels")
        }
        func extent(_ input: Int, _ kernel: Int, _ stride: Int) -> (Int, Int) {
            switch params.padding {
            case .same:
                let output = input * stride
                return (output, max((input - 1) * stride + kernel - output, 0) / 2)
            case .valid:
                return ((input - 1) * stride + kernel, 0)
            }
        }
        let (outH, padTop) = extent(inShape.height, kh, params.strideH)
        let (outW, padLeft) = extent(inShape.width, kw, params.strideW)
        try expect(index, out, NNTensorGeometry(height: outH, width: outW, channels: outShape.channels))
        let weightOffset = appendConvWeights(weights, outC: outShape.channels, kh: kh, kw: kw, inC: inShape.channels)
        let biasOffset = try appendBias(index, slot: 2, channels: outShape.channels)
        var convolution = NNConvolution(input: input, output: out, weightOffset: weightOffset, biasOffset: biasOffset,
                                        kernelH: kh, kernelW: kw, strideY: params.strideH, strideX: params.strideW,
                                        padTop: padTop, padLeft: padLeft)
        convolution.output = try absorbFollowers(output: out, epilogue: &convolution.epilogue, allowResidual: false)
        steps.append(.transposeConv(convolution))
    }

    private mutating func planBinary(_ index: Int, op: Int32) throws {
        let node = graph.nodes[index]
        let out = try output(index)
        guard node.inputs.count == 2 else { throw NNError.invalidGraph("\(graph.label(index)) needs 2 inputs") }
        let target = geometry(out)
        var first: Int?
        var operand: NNOperand?
        let kind = op == 1 ? "ADD" : "MUL"
        for (slot, raw) in node.inputs.enumerated() {
            let other = node.inputs[1 - slot]
            guard raw >= 0, graph.constants[raw] == nil, other >= 0 else { continue }
            let source = channelPads[raw] ?? raw
            guard first == nil, source == raw, geometry(raw) == target else { continue }
            // `raw` is the full-size operand; classify the other one.
            if let constant = graph.constants[other] {
                guard let values = constant.floats, values.count == target.channels || values.count == 1 else { continue }
                operand = .broadcastConstant(offset: appendChannelVector(values, channels: target.channels))
            } else {
                let otherSource = channelPads[other] ?? other
                let shape = geometry(otherSource)
                if shape == target || (shape.pixels == target.pixels && shape.channels <= target.channels && channelPads[other] != nil) {
                    operand = .tensor(otherSource)
                } else if shape.pixels == 1 && shape.channels == target.channels {
                    operand = .broadcastTensor(otherSource)
                } else {
                    continue
                }
            }
            first = raw
        }
        guard let input = first, let operand else {
            let shapes = node.inputs.map { $0 >= 0 ? "\(graph.tensors[$0].shape)" : "none" }.joined(separator: " and ")
            throw NNError.unsupportedOperator("\(graph.label(index)) \(kind) of \(shapes) (VelvetNN broadcasts only a [1,1,1,C] vector)")
        }
        var activation = try fusedActivation(index)
        var result = out
        // A MUL's product added to another tensor (the selfie decoder's skip * gate + path).
        var addend: Int?
        if op == 2, activation == .none, let next = soleConsumer(of: out), graph.nodes[next].builtin == .add,
           graph.nodes[next].inputs.count == 2, graph.nodes[next].outputs.count == 1, graph.nodes[next].outputs[0] >= 0 {
            let other = graph.nodes[next].inputs[0] == out ? graph.nodes[next].inputs[1] : graph.nodes[next].inputs[0]
            if other != out, other >= 0, graph.constants[other] == nil, channelPads[other] == nil,
               geometry(other) == target, geometry(graph.nodes[next].outputs[0]) == target, available(other, before: next) {
                addend = other
                activation = try fusedActivation(next)
                skipped.insert(next)
                position = next
                result = graph.nodes[next].outputs[0]
            }
        }
        // A MUL by a gate vector read only by a CONV_2D (directly or through a folded
        // resize, which commutes with a per-channel scale): the convolution scales its input.
        if op == 2, activation == .none, addend == nil, case .broadcastTensor(let gate) = operand,
           isOnlyConvolutionInput(out) {
            inputScales[out] = (input, gate)
            return
        }
        if activation == .none, let next = soleConsumer(of: result), isActivation(next),
           graph.nodes[next].inputs.first == result, graph.nodes[next].outputs.count == 1 {
            activation = try standaloneActivation(next) ?? .none
            skipped.insert(next)
            position = next
            result = graph.nodes[next].outputs[0]
        }
        steps.append(.elementwise(input: input, output: result, op: op, operand: operand, addend: addend, activation: activation))
    }

    private mutating func planPool(_ index: Int) throws {
        let node = graph.nodes[index]
        let input = try runtimeInput(index, 0), out = try output(index)
        guard case .pool2D(let o) = node.options, o.strideH > 0, o.strideW > 0, o.filterH > 0, o.filterW > 0 else {
            throw NNError.invalidGraph("\(graph.label(index)) lacks valid pooling options")
        }
        let inShape = geometry(input)
        let vertical = Self.padding(o.padding, input: inShape.height, kernel: o.filterH, stride: o.strideH)
        let horizontal = Self.padding(o.padding, input: inShape.width, kernel: o.filterW, stride: o.strideW)
        try expect(index, out, NNTensorGeometry(height: vertical.output, width: horizontal.output, channels: inShape.channels))
        let average = node.builtin == .averagePool2D
        let activation = try fusedActivation(index)
        let global = vertical.output == 1 && horizontal.output == 1 && vertical.before == 0 && horizontal.before == 0
            && o.filterH >= inShape.height && o.filterW >= inShape.width
        if average && global {
            try planGlobalMean(input: input, output: out, activation: activation)
        } else {
            steps.append(.pool(input: input, output: out, filterH: o.filterH, filterW: o.filterW, strideY: o.strideH,
                               strideX: o.strideW, padTop: vertical.before, padLeft: horizontal.before,
                               average: average, activation: activation))
        }
    }

    /// A mean over every pixel. Fused, it runs in the squeeze-and-excite kernel, which
    /// sums with many workgroups and also runs the one or two dense layers (1x1
    /// convolutions of the 1x1 result, with their activations) that read it.
    private mutating func planGlobalMean(input: Int, output: Int, activation: NNActivation) throws {
        let groupLimit = NNTuning.squeezeExciteGroupLimit
        guard fuse, activation == .none, geometry(input).groups <= groupLimit else {
            if let (a, b) = meanAddends.removeValue(forKey: input) {
                // The ADD was left for this mean to read: run it here after all.
                steps.append(.elementwise(input: a, output: input, op: 1, operand: .tensor(b), addend: nil, activation: .none))
            }
            steps.append(.globalMean(input: input, output: output, activation: activation))
            return
        }
        var layers: [NNConvolution] = []
        var current = output
        while layers.count < 2, let next = soleConsumer(of: current), graph.nodes[next].builtin == .conv2D,
              graph.nodes[next].inputs.first == current, let (_, shape) = try constant(next, 1), shape.count == 4,
              shape[1] == 1, shape[2] == 1, geometry(graph.nodes[next].outputs.first ?? current).pixels == 1,
              (shape[0] + 3) / 4 <= groupLimit {
            position = next
            skipped.insert(next)
            let layer = try makeConvolution(next, depthwise: false, allowResidual: false)
            layers.append(layer)
            current = layer.output
        }
        let addend = meanAddends.removeValue(forKey: input)
        steps.append(.squeezeExcite(input: addend?.0 ?? input, addend: addend?.1, output: current, layers: layers))
    }

    private mutating func planMean(_ index: Int) throws {
        let input = try runtimeInput(index, 0), out = try output(index)
        let rank = graph.tensors[input].shape.count
        guard let (value, _) = try constant(index, 1), let axes = value.ints, rank == 4,
              Set(axes.map { $0 < 0 ? $0 + rank : $0 }) == [1, 2] else {
            throw NNError.unsupportedOperator("\(graph.label(index)) MEAN is supported over axes 1 and 2 of a 4D tensor only")
        }
        let channels = geometry(input).channels
        try expect(index, out, NNTensorGeometry(height: 1, width: 1, channels: channels))
        try planGlobalMean(input: input, output: out, activation: .none)
    }

    private mutating func planPad(_ index: Int) throws {
        let input = try runtimeInput(index, 0), out = try output(index)
        let rank = graph.tensors[input].shape.count
        guard let (value, _) = try constant(index, 1), let pads = value.ints, pads.count == rank * 2,
              pads.allSatisfy({ $0 >= 0 }) else {
            throw NNError.unsupportedOperator("\(graph.label(index)) PAD needs constant non-negative paddings")
        }
        if graph.nodes[index].inputs.count > 2, graph.nodes[index].inputs[2] >= 0,
           graph.constants[graph.nodes[index].inputs[2]]?.floats?.allSatisfy({ $0 == 0 }) != true {
            throw NNError.unsupportedOperator("\(graph.label(index)) pads with a non-zero value")
        }
        // Per axis of the [H, W, C] view: (before, after).
        let view: [(Int, Int)]
        switch rank {
        case 4 where pads[0] == 0 && pads[1] == 0: view = [(pads[2], pads[3]), (pads[4], pads[5]), (pads[6], pads[7])]
        case 3 where pads[0] == 0 && pads[1] == 0: view = [(0, 0), (pads[2], pads[3]), (pads[4], pads[5])]
        case 2 where pads[0] == 0 && pads[1] == 0: view = [(0, 0), (0, 0), (pads[2], pads[3])]
        default: throw NNError.unsupportedOperator("\(graph.label(index)) pads the batch axis or a rank-\(rank) tensor")
        }
        let s = geometry(input)
        try expect(index, out, NNTensorGeometry(height: s.height + view[0].0 + view[0].1, width: s.width + view[1].0 + view[1].1,
                                                channels: s.channels + view[2].0 + view[2].1))
        steps.append(.pad(input: input, output: out, top: view[0].0, left: view[1].0, front: view[2].0))
    }

    private mutating func planReshape(_ index: Int) throws {
        let input = try runtimeInput(index, 0), out = try output(index)
        guard graph.tensors[input].shape.reduce(1, *) == graph.tensors[out].shape.reduce(1, *) else {
            throw NNError.invalidGraph("\(graph.label(index)) reshapes \(graph.tensors[input].shape) into \(graph.tensors[out].shape)")
        }
        let a = geometry(input), b = geometry(out)
        // Same channel count, or whole vec4s on both sides: the packed bytes are identical.
        if a.channels == b.channels || (a.channels % 4 == 0 && b.channels % 4 == 0) {
            aliases[out] = input
        } else {
            steps.append(.reshape(input: input, output: out))
        }
    }

    private mutating func planConcatenation(_ index: Int) throws {
        let node = graph.nodes[index]
        let out = try output(index)
        guard case .concatenation(let rawAxis, let activation) = node.options else {
            throw NNError.invalidGraph("\(graph.label(index)) lacks concatenation options")
        }
        guard activation == .none else {
            throw NNError.unsupportedOperator("\(graph.label(index)) CONCATENATION with a fused activation")
        }
        let rank = graph.tensors[out].shape.count
        let axis = rawAxis < 0 ? rawAxis + rank : rawAxis
        // The axis of the [H, W, C] view: 0 = H, 1 = W, 2 = C.
        let viewAxis: Int
        switch (rank, axis) {
        case (4, 1): viewAxis = 0
        case (4, 2), (3, 1): viewAxis = 1
        case (4, 3), (3, 2), (2, 1), (1, 0): viewAxis = 2
        default: throw NNError.unsupportedOperator("\(graph.label(index)) concatenates along axis \(rawAxis) of a rank-\(rank) tensor")
        }
        let target = geometry(out)
        var position = 0
        for slot in node.inputs.indices {
            let input = try runtimeInput(index, slot)
            let s = geometry(input)
            let extents = [s.height, s.width, s.channels], full = [target.height, target.width, target.channels]
            for a in 0..<3 where a != viewAxis && extents[a] != full[a] {
                throw NNError.invalidGraph("\(graph.label(index)) joins \(graph.tensors[input].shape) into \(graph.tensors[out].shape)")
            }
            let origin = (0..<3).map { $0 == viewAxis ? position : 0 }
            steps.append(.place(input: input, output: out, y0: origin[0], x0: origin[1], c0: origin[2]))
            position += extents[viewAxis]
        }
        guard position == [target.height, target.width, target.channels][viewAxis] else {
            throw NNError.invalidGraph("\(graph.label(index)) inputs do not fill \(graph.tensors[out].shape)")
        }
    }

    private mutating func planResize(_ index: Int) throws {
        let (input, out, resize) = try resizeParameters(index)
        steps.append(.resizeBilinear(input: input, output: out, resize: resize))
    }

    private func resizeParameters(_ index: Int) throws -> (input: Int, output: Int, resize: NNResize) {
        let input = try runtimeInput(index, 0), out = try output(index)
        guard case .resizeBilinear(let o) = graph.nodes[index].options, !(o.alignCorners && o.halfPixelCenters) else {
            throw NNError.unsupportedOperator("\(graph.label(index)) RESIZE_BILINEAR with both align_corners and half_pixel_centers")
        }
        let a = geometry(input), b = geometry(out)
        guard a.channels == b.channels else { throw NNError.invalidGraph("\(graph.label(index)) changes the channel count") }
        func scale(_ input: Int, _ output: Int) -> Float {
            o.alignCorners && output > 1 ? Float(input - 1) / Float(output - 1) : Float(input) / Float(output)
        }
        return (input, out, NNResize(scaleY: scale(a.height, b.height), scaleX: scale(a.width, b.width),
                                     centreOffset: o.halfPixelCenters ? 0.5 : 0))
    }

    /// ADDs of two same-shape computed tensors, with no activation, whose output only a
    /// global mean (an AVERAGE_POOL_2D over the whole tensor, or MEAN) reads.
    private mutating func findMeanAddends() {
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

    /// Whether `tensor` is read only as a CONV_2D's input, directly or through a folded resize.
    private func isOnlyConvolutionInput(_ tensor: Int) -> Bool {
        guard fuse, !graphOutputs.contains(tensor), let readers = consumers[tensor], readers.count == 1 else { return false }
        var reader = readers[0], read = tensor
        if let resized = graph.nodes[reader].outputs.first, resizedInputs[resized]?.source == tensor {
            guard let next = soleConsumer(of: resized) else { return false }
            (reader, read) = (next, resized)
        } else if skipped.contains(reader) {
            return false
        }
        return graph.nodes[reader].builtin == .conv2D && graph.nodes[reader].inputs.first == read
    }

    /// Whether operator `node` is a CONV_2D with a 1x1 kernel and stride 1.
    private func isPointwiseConv(_ node: Int) -> Bool {
        guard graph.nodes[node].builtin == .conv2D, case .conv2D(let o) = graph.nodes[node].options,
              o.strideH == 1, o.strideW == 1, o.dilationH == 1, o.dilationW == 1,
              graph.nodes[node].inputs.count >= 2, graph.nodes[node].inputs[1] >= 0 else { return false }
        let shape = graph.tensors[graph.nodes[node].inputs[1]].shape
        return graph.constants[graph.nodes[node].inputs[1]] != nil && shape.count == 4 && shape[1] == 1 && shape[2] == 1
    }

    /// RESIZE_BILINEARs read only by a 1x1, stride-1 convolution (the selfie decoder's
    /// upsampling): the convolution reads the resize's input, resized, a launch and a
    /// level fewer.
    private mutating func findResizesBeforePointwiseConvs() throws {
        for (index, node) in graph.nodes.enumerated() where node.builtin == .resizeBilinear {
            guard node.outputs.count == 1, node.outputs[0] >= 0, let (input, resized, resize) = try? resizeParameters(index),
                  let reader = soleConsumer(of: resized), isPointwiseConv(reader), graph.nodes[reader].inputs.first == resized else { continue }
            resizedInputs[resized] = (input, resize)
            skipped.insert(index)
        }
    }

    /// RESIZE_BILINEARs whose output is only the residual of an ADD that a convolution
    /// will absorb (its other operand is a CONV_2D's output read by nothing else): the
    /// convolution's epilogue samples the resize's input instead, so the resize is skipped.
    private mutating func findFoldableResizes() throws {
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

    private mutating func planDepthToSpace(_ index: Int) throws {
        let input = try runtimeInput(index, 0), out = try output(index)
        guard case .depthToSpace(let block) = graph.nodes[index].options, block > 0 else {
            throw NNError.invalidGraph("\(graph.label(index)) lacks a block size")
        }
        let s = geometry(input)
        guard s.channels % (block * block) == 0 else {
            throw NNError.invalidGraph("\(graph.label(index)) has \(s.channels) channels for block \(block)")
        }
        try expect(index, out, NNTensorGeometry(height: s.height * block, width: s.width * block,
                                                channels: s.channels / (block * block)))
        steps.append(.depthToSpace(input: input, output: out, block: block))
    }
}
