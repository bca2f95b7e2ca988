import VelvetGPU

/// Side-by-side inferences (`NNModelPlan.recordSideBySide`) recorded once per group of plans
/// and replayed after: a plan's launches never change, so a tracker that runs the same few
/// groups frame after frame (mesh + person mask; every 10th frame the detectors too) records
/// each group once. Used from one thread at a time.
public final class NNRecordedGroups {
    private struct Entry {
        let plans: [NNModelPlan]
        let commands: RecordedCommands
    }

    private struct Key: Hashable {
        let plans: [ObjectIdentifier]
        let lane: GPULane
    }

    /// Keyed by the plans' identities and the lane replaying them (a recording belongs to
    /// one queue family); an entry holds its plans, so no identity is reused.
    private var entries: [Key: Entry] = [:]
    /// Groups kept at most; past it the cache starts again (a tracker runs a handful).
    static let limit = 32

    public init() {}

    public var count: Int { entries.count }

    /// The recording of `plans` side by side for `lane`'s recorders, made on first use.
    public func commands(for plans: [NNModelPlan], lane: GPULane) throws -> RecordedCommands {
        let key = Key(plans: plans.map(ObjectIdentifier.init), lane: lane)
        if let entry = entries[key] { return entry.commands }
        if entries.count >= Self.limit { entries.removeAll() }
        let context = plans[0].context
        let commands = try RecordedCommands(context: context, lane: lane) { NNModelPlan.recordSideBySide(plans, on: $0) }
        entries[key] = Entry(plans: plans, commands: commands)
        return commands
    }
}
