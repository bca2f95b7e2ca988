import VelvetGPU

/// Inferences of several models recorded as one: each with what fills its plan's inputs and
/// what reads its outputs. `record` runs them in groups of distinct plans, the plans of a
/// group side by side (`NNModelPlan.recordSideBySide`), so a tracker frame's mesh, person
/// mask and detectors share their barriers instead of queueing behind each other's.
///
/// An inference goes into the first group that lacks its plan and comes after the group of
/// that plan's previous inference, so one plan's inferences keep their order (each reads its
/// outputs before the next one overwrites them). Per group: every input, the plans, every
/// output, in the order added.
public final class NNBatch {
    private struct Inference {
        let plan: NNModelPlan
        let input: (CommandRecorder) throws -> Void
        let output: (CommandRecorder) throws -> Void
    }

    private var groups: [[Inference]] = []
    /// Per plan, the group of its latest inference.
    private var latestGroup: [ObjectIdentifier: Int] = [:]

    public init() {}

    public var isEmpty: Bool { groups.isEmpty }

    /// Adds one inference of `plan`: `input` records what fills its inputs, `output` what reads
    /// its outputs (both on `record`'s recorder).
    public func add(_ plan: NNModelPlan, input: @escaping (CommandRecorder) throws -> Void,
                    output: @escaping (CommandRecorder) throws -> Void) {
        let key = ObjectIdentifier(plan)
        let group = latestGroup[key].map { $0 + 1 } ?? 0
        if group == groups.count { groups.append([]) }
        groups[group].append(Inference(plan: plan, input: input, output: output))
        latestGroup[key] = group
    }

    /// Records every inference added, group by group, and empties the batch. With
    /// `recordings`, each group's launches are replayed from there (recorded on first use).
    public func record(on recorder: CommandRecorder, recordings: NNRecordedGroups? = nil) throws {
        defer { (groups, latestGroup) = ([], [:]) }
        for group in groups {
            for inference in group { try inference.input(recorder) }
            if let recordings {
                recorder.replay(try recordings.commands(for: group.map(\.plan), lane: recorder.lane))
            } else {
                NNModelPlan.recordSideBySide(group.map(\.plan), on: recorder)
            }
            for inference in group { try inference.output(recorder) }
        }
    }
}
