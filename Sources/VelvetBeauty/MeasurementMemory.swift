import VelvetGPU
import VelvetKernels

/// What a per-entry measurement belongs to: the face's track, which part of it (the right or
/// left eye, a shine region), and the layout of its floats where that can change (a grid's
/// size). Measurements of one key are smoothed over frames (`MeasurementMemory`).
public struct MeasurementKey: Hashable, Sendable {
    public var track: Int
    public var part: Int
    public var layout: Int

    public init(track: Int, part: Int, layout: Int = 0) {
        (self.track, self.part, self.layout) = (track, part, layout)
    }

    /// The key of `face`'s `part`; nil when the face has no track (a still).
    public static func of(_ face: BeautyFace, part: Int, layout: Int = 0) -> MeasurementKey? {
        face.track.map { MeasurementKey(track: $0, part: part, layout: layout) }
    }
}

/// Per-entry measurements a stage makes on the GPU from each frame's own pixels (a retouch
/// stage's stats per mouth, eye or region; the strength fit's gain per face), smoothed over
/// frames by track (`measurement_memory.comp`), in place, before the pass that reads them.
/// Each measurement follows its frame's noise a little; averaged over frames, the stage's
/// effect stops flickering where the face does not change (issue 17). The measurements come
/// from the frame being rendered (they depend on its smoothing), so the average is causal: an
/// exponential one. A measurement that repeats the last one exactly keeps the average, so a
/// repeated frame renders the same. An entry of a new track, a new part or a new layout
/// starts from its own measurement.
final class MeasurementMemory {
    typealias Key = MeasurementKey

    /// The weight of the new measurement in the average: its noise falls to
    /// sqrt(w / (2 - w)) = 0.45 of a single frame's, and a change is 90 % followed within 6
    /// frames.
    static let newWeight: Float = 1.0 / 3

    private let context: GPUContext
    private let kernel: TypedKernel<KernelLibrary.MeasurementMemoryPush>
    /// Floats per entry, the validity float's index (0 marks a measurement that failed), and
    /// the floats that are frame positions (passed through).
    private let floatsPerEntry: Int
    private let validity: Int?
    private let passedRaw: Range<Int>
    private var slots: [Key: Int] = [:]
    private var memory: GPUBuffer?
    private var capacity = 0

    init(context: GPUContext, stride: Int, validity: Int?, passedRaw: Range<Int> = 0..<0) throws {
        self.context = context
        self.floatsPerEntry = stride
        self.validity = validity
        self.passedRaw = passedRaw
        kernel = try TypedKernel(context: context)
    }

    /// Records the smoothing of `stats` (one entry of `stride` floats per key, in order).
    /// Call it on every frame the stage runs, with the frame's keys (an empty list when the
    /// stage found nothing), so an entry gone for a frame starts afresh when it comes back.
    /// Entries without a key (a still, a face not tracked) keep their measurement.
    func record(on recorder: CommandRecorder, stats: GPUBuffer, keys: [Key?]) throws {
        // A key met twice in one frame (two faces on one track) is kept by its first entry.
        var met = Set<Key>()
        let keys = keys.map { key in key.flatMap { met.insert($0).inserted ? $0 : nil } }
        let fresh = assign(keys.compactMap { $0 })
        guard !met.isEmpty else { return }
        var rows: [Int32] = []
        var spare = (slots.values.max() ?? -1) + 1
        for key in keys {
            if let key, let slot = slots[key] {
                rows += [Int32(slot), fresh.contains(key) ? 1 : 0]
            } else {
                rows += [Int32(spare), 1]
                spare += 1
            }
        }
        let needed = spare
        if needed > capacity || memory == nil {
            // A larger memory starts every entry afresh.
            capacity = max(needed, 2 * capacity, 8)
            memory = try GPUBuffer(context: context, size: capacity * 2 * floatsPerEntry * 4)
            for index in stride(from: 1, to: rows.count, by: 2) { rows[index] = 1 }
        }
        let entries = try GPUBuffer.pooled(context: context, size: rows.count * 4)
        try rows.withUnsafeBytes { try recorder.upload($0, to: entries) }
        let push = KernelLibrary.MeasurementMemoryPush(stride: Int32(floatsPerEntry), validity: Int32(validity ?? -1),
                                                       rawFrom: Int32(passedRaw.lowerBound), rawTo: Int32(passedRaw.upperBound),
                                                       newWeight: Self.newWeight)
        recorder.dispatch(kernel, [.buffer(stats), .buffer(entries), .buffer(memory!)], push: push, groups: (keys.count, 1, 1))
    }

    /// Forgets every entry: a frame where the stage found none.
    func forgetAll() {
        slots = [:]
    }

    /// Gives this frame's keys slots (the lowest free ones to new keys) and frees the slots of
    /// keys not seen; returns the keys that are new.
    private func assign(_ keys: [Key]) -> Set<Key> {
        let seen = Set(keys)
        slots = slots.filter { seen.contains($0.key) }
        var used = Set(slots.values)
        var fresh = Set<Key>()
        var next = 0
        for key in keys where slots[key] == nil {
            while used.contains(next) { next += 1 }
            slots[key] = next
            used.insert(next)
            fresh.insert(key)
        }
        return fresh
    }
}
