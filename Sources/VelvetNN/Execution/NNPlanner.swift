/// Turns an `NNGraph` into kernel launches: checks every operator and shape, packs the
/// constants for the kernels, and (when `fuse` is on) fuses what is cheap to fuse. The
/// work is the ordered pass list in Planning/NNFusionPass.swift (fusions that claim
/// operators, then the per-operator lowering in Planning/Operators, then fusions of the
/// lowered steps); this type holds the state they share and runs them. Fusion keeps the
/// arithmetic of the unfused ops, up to the order in which a convolution's terms are added.
struct NNPlanner {
    let graph: NNGraph
    let fuse: Bool
    let tuning: NNTuning

    /// Launches in execution order (after `run`).
    var steps: [NNStep] = []
    /// For each step, the graph operator at whose place it runs: a fused chain runs
    /// where its last operator was, so a residual computed after the convolution
    /// (the mesh computes the skip path's max-pool after the block's conv) is ready.
    var positions: [Int] = []
    /// Where the step being planned runs; fusion moves it to the last operator absorbed.
    var position = 0
    /// Packed constants (a multiple of 4 floats: vec4s).
    var constantData: [Float] = [0, 0, 0, 0]
    /// RESHAPE outputs that share their input's memory: output -> input.
    var aliases: [Int: Int] = [:]

    var producer: [Int: Int] = [:]
    var consumers: [Int: [Int]] = [:]
    var graphOutputs: Set<Int> = []
    var skipped: Set<Int> = []
    /// PAD outputs read in place: the PAD's input and its before-padding (top, left).
    var spatialPads: [Int: (source: Int, top: Int, left: Int)] = [:]
    /// MUL outputs a CONV_2D reads by scaling the MUL's input: output -> the input and the
    /// [1,1,1,C] gate.
    var inputScales: [Int: (source: Int, gate: Int)] = [:]
    /// ADD outputs read only by a global mean, which sums the ADD's operands itself:
    /// output -> the operands.
    var meanAddends: [Int: (Int, Int)] = [:]
    /// RESIZE_BILINEAR outputs a convolution's epilogue samples in place: output -> the
    /// resize's input and parameters.
    var residualResizes: [Int: (source: Int, resize: NNResize)] = [:]
    /// Channel-tail PAD outputs read in place by an ADD: output -> the PAD's input.
    var channelPads: [Int: Int] = [:]
    /// RESIZE_BILINEAR outputs a 1x1 CONV_2D reads through the resize: output -> the
    /// resize's input and parameters.
    var resizedInputs: [Int: (source: Int, resize: NNResize)] = [:]

    init(graph: NNGraph, fuse: Bool, tuning: NNTuning = .gpu) {
        self.graph = graph
        self.fuse = fuse
        self.tuning = tuning
    }

    /// Plans the graph with `passes` (the planner's list; tests drop one to see what it does).
    mutating func run(passes: [any NNFusionPass] = Self.passes) throws {
        try validateTensors()
        for (index, node) in graph.nodes.enumerated() {
            for input in node.inputs where input >= 0 && graph.constants[input] == nil {
                consumers[input, default: []].append(index)
            }
            for output in node.outputs where output >= 0 { producer[output] = index }
        }
        graphOutputs = Set(graph.outputs)
        for pass in passes where pass.isEnabled(fuse: fuse, tuning: tuning) {
            try pass.apply(to: &self)
        }
        steps = zip(steps, positions).enumerated()
            .sorted { ($0.element.1, $0.offset) < ($1.element.1, $1.offset) }
            .map(\.element.0)
    }
}
