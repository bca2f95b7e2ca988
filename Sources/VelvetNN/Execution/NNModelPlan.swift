import Foundation
import VelvetGPU
import VelvetKernels

/// A model ready to run on the GPU: planned once (operators checked, fused, tensor
/// memory placed), constants uploaded once, every launch prepared. `record(on:)` adds
/// one inference to a command recorder with no allocation and no CPU round trip, so it
/// can sit between image kernels in a frame's command buffer.
///
/// Inputs are packed NHWC4 tensors in their own buffers (write them with
/// `NNImageToTensor` or `writeInput`); outputs are dense float32 tensors in their own
/// buffers, ready for later kernels or `readOutputs`. Intermediate tensors share one
/// arena buffer, reused as tensors die.
public final class NNModelPlan: @unchecked Sendable {
    public struct Options: Sendable {
        /// Fuse activations, residual ADDs and zero PADs into the kernels before them.
        /// Off runs one launch per operator (a reference for tests).
        public var fuse: Bool
        /// How launches are shaped; nil: `NNTuning.forDevice` for the context's device.
        public var tuning: NNTuning?

        public init(fuse: Bool = true, tuning: NNTuning? = nil) {
            self.fuse = fuse
            self.tuning = tuning
        }
    }

    public let context: GPUContext
    /// How the launches were shaped.
    public let tuning: NNTuning
    public let inputs: [NNTensor]
    public let outputs: [NNTensor]
    /// Bytes of the intermediate-tensor arena and of the packed constants.
    public let arenaByteCount: Int
    public let constantByteCount: Int
    /// One short name per kernel launch, in order ("conv1x1", "depthwise3x3", ...).
    public let launchNames: [String]
    /// Per launch, its name with input and output shapes ("conv1x1 64x64x24 -> 64x64x48").
    public let launchDetails: [String]

    private let launches: [Launch]
    /// The launches of each level, in order (each level after the first waits behind a barrier).
    private let levelRanges: [Range<Int>]
    /// Levels of independent launches: the barriers one inference needs.
    public let levelCount: Int
    private let arena: GPUBuffer
    private let constants: GPUBuffer
    private let scratch: GPUBuffer

    /// One dispatch, its kernel's push block typed: recorded by `dispatch`.
    struct Launch {
        let dispatch: (CommandRecorder, DispatchOrdering) -> Void

        init<Push>(kernel: TypedKernel<Push>, bindings: [GPUBinding], push: Push, groups: (x: Int, y: Int, z: Int)) {
            dispatch = { $0.dispatch(kernel, bindings, push: push, groups: groups, ordering: $1) }
        }
    }

    /// Loads a .tflite file and plans it.
    public convenience init(context: GPUContext, contentsOf url: URL, kernels: NNKernels? = nil,
                            options: Options = Options()) throws {
        let start = DispatchTime.now().uptimeNanoseconds
        let graph = try Trace.span("nn.parse") { try NNGraph(contentsOf: url) }
        try self.init(context: context, graph: graph, kernels: kernels, options: options)
        Trace.shared?.record("model.load \(url.lastPathComponent)", since: start)
    }

    /// What planning decided, kept so that `twin()` can make another instance without
    /// planning again: the launches in level order, the arena placement, the buffer sizes.
    private struct Blueprint {
        let kernels: NNKernels
        let graph: NNGraph
        let aliases: [Int: Int]
        let steps: [NNStep]
        let levels: [Int]
        let offsets: [Int: Int]
        let arenaVec4s: Int
        let scratchVec4s: Int

        func root(_ tensor: Int) -> Int { Self.root(tensor, aliases: aliases) }

        /// The tensor whose memory `tensor` shares (itself when it is no alias).
        static func root(_ tensor: Int, aliases: [Int: Int]) -> Int {
            var t = tensor
            while let next = aliases[t] { t = next }
            return t
        }
    }
    private let blueprint: Blueprint

    public convenience init(context: GPUContext, graph: NNGraph, kernels: NNKernels? = nil, options: Options = Options()) throws {
        let kernels = kernels ?? NNKernels(context: context)
        guard kernels.context === context else {
            throw NNError.invalidArgument("the NNKernels belong to another GPUContext")
        }
        var tuning = options.tuning ?? NNTuning.forDevice(context.device.kind)
        // A device may take fewer invocations per workgroup than the tuning asks for.
        tuning.blockPairThreads = [256, 512, 1024].last { $0 <= min(tuning.blockPairThreads, context.maxWorkgroupInvocations) } ?? 256
        var planner = NNPlanner(graph: graph, fuse: options.fuse, tuning: tuning)
        try Trace.span("nn.plan") { try planner.run() }
        let plannedSteps = planner.steps
        let aliases = planner.aliases
        func root(_ tensor: Int) -> Int { Blueprint.root(tensor, aliases: aliases) }
        for index in graph.inputs where !NNTensorGeometry.isSupported(graph.tensors[index].shape) {
            throw NNError.unsupportedOperator("graph input \(graph.name(index)) has shape \(graph.tensors[index].shape)")
        }

        // Launches in levels: a launch runs one level after the latest launch whose output
        // it reads (or whose output it also writes, a concatenation's parts), so the
        // launches of one level are independent and run with no barrier between them.
        // Squeeze-and-excite launches share their scratch memory, so they go one per level.
        var levelOf: [Int] = []
        var writtenAt: [Int: Int] = [:]
        var scratchLevel = 0
        for step in plannedSteps {
            var level = 1 + step.reads.map(root).map { writtenAt[$0] ?? 0 }.max()!
            if let written = step.write.map(root) { level = max(level, (writtenAt[written] ?? 0) + 1) }
            if case .squeezeExcite = step {
                level = max(level, scratchLevel + 1)
                scratchLevel = level
            }
            if let written = step.write.map(root) { writtenAt[written] = level }
            levelOf.append(level)
        }
        let order = plannedSteps.indices.sorted { (levelOf[$0], $0) < (levelOf[$1], $1) }
        let steps = order.map { plannedSteps[$0] }
        let levels = order.map { levelOf[$0] }

        // Lifetimes of arena tensors in levels (aliases count as their root): a tensor's
        // memory is reused only from the level after its last reader's.
        var first: [Int: Int] = [:], last: [Int: Int] = [:]
        for (step, level) in zip(steps, levels) {
            if let written = step.write.map(root) {
                first[written] = min(first[written] ?? level, level)
                last[written] = max(last[written] ?? level, level)
            }
            for read in step.reads.map(root) { last[read] = max(last[read] ?? level, level) }
        }
        let inputSet = Set(graph.inputs)
        for read in last.keys where first[read] == nil && !inputSet.contains(read) {
            throw NNError.invalidGraph("\(graph.name(read)) is read but never written")
        }
        let requests = first.keys.sorted().map { t in
            NNMemoryPlanner.Request(id: t, size: NNTensorGeometry(shape: graph.tensors[t].shape).vec4Count,
                                    firstStep: first[t]!, lastStep: last[t]!)
        }
        let (offsets, arenaVec4s) = NNMemoryPlanner.place(requests)
        let scratchVec4s = tuning.scratchVec4s(for: steps, geometry: { NNTensorGeometry(shape: graph.tensors[$0].shape) })
        let constants = try GPUBuffer(context: context, size: planner.constantData.count * 4)
        let blueprint = Blueprint(kernels: kernels, graph: graph, aliases: aliases, steps: steps, levels: levels, offsets: offsets,
                                  arenaVec4s: arenaVec4s, scratchVec4s: scratchVec4s)
        try self.init(context: context, tuning: tuning, blueprint: blueprint, constants: constants,
                      constantData: planner.constantData)
    }

    /// Makes the plan's buffers and launches; uploads `constantData` into `constants` when
    /// given (a twin shares its original's).
    private init(context: GPUContext, tuning: NNTuning, blueprint: Blueprint, constants: GPUBuffer, constantData: [Float]?) throws {
        self.context = context
        self.tuning = tuning
        self.blueprint = blueprint
        let graph = blueprint.graph

        // Dedicated buffers for inputs (packed) and outputs (dense).
        var inputs: [NNTensor] = []
        var inputBuffers: [Int: GPUBuffer] = [:]
        for index in graph.inputs {
            let shape = graph.tensors[index].shape
            let buffer = try GPUBuffer(context: context, size: max(NNTensorGeometry(shape: shape).vec4Count * 16, 16))
            inputBuffers[index] = buffer
            inputs.append(NNTensor(name: graph.tensors[index].name, buffer: buffer, byteOffset: 0, shape: shape,
                                   layout: .packedNHWC4))
        }
        var outputs: [NNTensor] = []
        for index in graph.outputs {
            let shape = graph.tensors[index].shape
            let buffer = try GPUBuffer(context: context, size: max(shape.reduce(1, *) * 4, 4))
            outputs.append(NNTensor(name: graph.tensors[index].name, buffer: buffer, byteOffset: 0, shape: shape, layout: .dense))
        }
        let arena = try GPUBuffer(context: context, size: max(blueprint.arenaVec4s, 1) * 16)
        let scratch = try GPUBuffer(context: context, size: 16 * blueprint.scratchVec4s)
        self.scratch = scratch
        self.arena = arena
        self.constants = constants
        arenaByteCount = arena.size
        constantByteCount = constants.size
        self.inputs = inputs
        self.outputs = outputs

        let upload = try CommandRecorder(context: context)
        if let constantData { try constantData.withUnsafeBytes { try upload.upload($0, to: constants) } }
        try upload.fill(scratch, size: scratch.size)
        _ = try Trace.span("nn.upload") { try upload.submit().wait() }

        let offsets = blueprint.offsets
        let builder = LaunchBuilder(graph: graph, kernels: blueprint.kernels, arena: arena, constants: constants, scratch: scratch,
                                    tuning: tuning,
                                    location: { tensor in
                                        let r = blueprint.root(tensor)
                                        let count = NNTensorGeometry(shape: graph.tensors[r].shape).vec4Count
                                        if let buffer = inputBuffers[r] { return (buffer, 0, count) }
                                        return (arena, offsets[r] ?? 0, count)
                                    },
                                    outputs: outputs)
        let steps = blueprint.steps, levels = blueprint.levels
        launches = try Trace.span("nn.launches") { try steps.map { try builder.launch(for: $0) } }
        let starts = levels.indices.filter { $0 == 0 || levels[$0] != levels[$0 - 1] }
        levelRanges = zip(starts, starts.dropFirst() + [levels.count]).map { $0..<$1 }
        levelCount = levels.last ?? 0
        launchNames = steps.map(\.name)
        launchDetails = steps.map { step in
            func shape(_ t: Int) -> String {
                let g = NNTensorGeometry(shape: graph.tensors[t].shape)
                return "\(g.height)x\(g.width)x\(g.channels)"
            }
            let input = step.reads.first.map(shape) ?? "?"
            return "\(step.name) \(input) -> \(step.write.map(shape) ?? "output")"
        }
    }

    /// Another instance of this plan: its own inputs, outputs and intermediate memory, the
    /// same launches and constants (shared, not uploaded again), so it can run side by side
    /// with this one (`NNBatch`) at a fraction of the cost of loading the model again.
    public func twin() throws -> NNModelPlan {
        try NNModelPlan(context: context, tuning: tuning, blueprint: blueprint, constants: constants, constantData: nil)
    }

    public var launchCount: Int { launches.count }

    /// Records one inference: reads `inputs`, writes `outputs`. One barrier orders it after
    /// earlier work on those buffers; inside, launches of a level run side by side and a
    /// barrier separates the levels.
    public func record(on recorder: CommandRecorder) {
        Self.recordSideBySide([self], on: recorder)
    }

    /// Records one inference of each plan with their levels side by side: level i of every
    /// plan between the same two barriers. A model's small launches leave most of a large GPU
    /// idle and each barrier drains it, so models recorded together cost about the barriers of
    /// the deepest one instead of the sum of all. The results are those of recording the plans
    /// one after another (each plan has its own buffers; a plan may appear once).
    public static func recordSideBySide(_ plans: [NNModelPlan], on recorder: CommandRecorder) {
        precondition(Set(plans.map(ObjectIdentifier.init)).count == plans.count, "a plan runs once in a side-by-side recording")
        for plan in plans {
            recorder.synchronize(reading: plan.inputs.map(\.buffer) + [plan.constants],
                                 writing: [plan.arena, plan.scratch] + plan.outputs.map(\.buffer))
        }
        let levels = plans.map(\.levelRanges)
        for level in 0..<(levels.map(\.count).max() ?? 0) {
            var ordering: DispatchOrdering = level > 0 ? .afterBarrier : .concurrent
            for (plan, ranges) in zip(plans, levels) where level < ranges.count {
                for index in ranges[level] {
                    plan.launches[index].dispatch(recorder, ordering)
                    ordering = .concurrent
                }
            }
        }
    }

    /// Records one inference with every launch in its own timed section, labelled
    /// "index:name" (for profiling; a recorder times at most 128 sections).
    public func recordProfiled(on recorder: CommandRecorder) {
        for (index, launch) in launches.enumerated() {
            recorder.beginSection("\(index):\(launchNames[index])")
            launch.dispatch(recorder, .automatic)
        }
        recorder.endSection()
    }

    /// Records an upload of dense NHWC float32 values (TFLite's layout) into input `index`.
    public func writeInput(_ values: [Float], index: Int = 0, on recorder: CommandRecorder) throws {
        guard inputs.indices.contains(index) else {
            throw NNError.invalidArgument("the model has \(inputs.count) input(s), not \(index + 1)")
        }
        let input = inputs[index]
        guard values.count == input.elementCount else {
            throw NNError.invalidArgument("input \(input.name) takes \(input.elementCount) values \(input.shape), got \(values.count)")
        }
        let packed = NNTensorGeometry(shape: input.shape).pack(values)
        try packed.withUnsafeBytes { try recorder.upload($0, to: input.buffer, offset: input.byteOffset) }
    }

    /// Records copies of every output to the CPU; read them with `floats(_:)` after the wait.
    public func readOutputs(on recorder: CommandRecorder) throws -> [GPUReadback] {
        try outputs.map { try recorder.download($0.buffer) }
    }

    /// The float32 values of a completed readback.
    public static func floats(_ readback: GPUReadback) -> [Float] {
        let raw = readback.raw
        return (0..<(raw.count / 4)).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: Float.self) }
    }

    /// Runs one inference on dense NHWC inputs and returns the dense outputs (one
    /// submission, waited for). For tests and tools; a frame loop records instead.
    public func run(_ values: [[Float]]) throws -> [[Float]] {
        guard values.count == inputs.count else {
            throw NNError.invalidArgument("the model takes \(inputs.count) input(s), got \(values.count)")
        }
        let recorder = try CommandRecorder(context: context)
        for (index, input) in values.enumerated() { try writeInput(input, index: index, on: recorder) }
        record(on: recorder)
        let readbacks = try readOutputs(on: recorder)
        try recorder.submit().wait()
        return zip(readbacks, outputs).map { readback, output in Array(Self.floats(readback).prefix(output.elementCount)) }
    }
}
