import VelvetGPU
import VelvetKernels

/// The strength fit's per-face gains averaged over frames with no lag (issue 17). When the
/// skin stages' fronts run `lead` frames ahead of the blends (`SkinStage.recordFront`), a
/// frame's results are averaged with its faces' (by track) in the `lead` frames before and
/// after it, uniformly over the frames where the face was measured
/// (`beauty_gain_window.comp`). Over 2 x 2 + 1 frames one frame's measurement noise falls to
/// sqrt(1/5) = 0.45, as with the causal average (`MeasurementMemory`), and a change is
/// followed centred on the frame it happens in, where the causal average lags it by two
/// frames. Tracks end at a cut, so nothing is averaged across one; a result that repeats the
/// face's in the frame before keeps that frame's average (a repeated frame renders the same).
final class GainWindow {
    /// One front's measurement: its results (`StrengthFit.resultStride` floats a face, in
    /// `keys`' order; nil when the frame had no fit) and each face's key.
    private struct Entry {
        let results: GPUBuffer?
        let keys: [MeasurementKey?]

        /// The first face of `key` (two faces on one track: the first is kept).
        func face(_ key: MeasurementKey?) -> Int? {
            key.flatMap { key in keys.firstIndex { $0 == key } }
        }
    }

    let lead: Int
    private let context: GPUContext
    private let kernel: TypedKernel<KernelLibrary.BeautyGainWindowPush>
    /// The fronts' entries from `lead` frames before the next frame to blend on.
    private var entries: [Entry] = []
    /// The next frame to blend, as an index into `entries`.
    private var next = 0
    /// The frame blended last: its averages and keys (nil: it had no fit).
    private var lastAverage: Entry?
    /// The averages' buffers, taken in turn: a frame's is read by its blend and by the next
    /// frame's repeat test, with two frames in flight. Owned rather than pooled, so the blend's
    /// texel view of each is made once (a pooled buffer comes back from any use, often without).
    private var outputs: [GPUBuffer] = []
    private var nextOutput = 0
    static let outputCount = 4

    init(context: GPUContext, lead: Int) throws {
        self.context = context
        self.lead = lead
        kernel = try TypedKernel(context: context)
    }

    /// Adds the next front's results (frames in order), one entry per key.
    func add(results: GPUBuffer?, keys: [MeasurementKey?]) {
        entries.append(Entry(results: results, keys: keys))
    }

    /// Records the averages of the next frame to blend, from the fronts added so far (at the
    /// input's end fewer than `lead` follow it); returns them in the frame's face order, or nil
    /// when the frame had no fit.
    func record(on recorder: CommandRecorder) throws -> GPUBuffer? {
        guard next < entries.count else { throw BeautyError.invalidSettings("a gain averaged before its frame's front was recorded") }
        defer {
            next += 1
            let dropped = max(0, next - lead)
            entries.removeFirst(dropped)
            next -= dropped
        }
        let centre = entries[next]
        guard centre.results != nil, !centre.keys.isEmpty else {
            lastAverage = nil
            return nil
        }
        let stride = StrengthFit.resultStride
        // The window's results one after another, then the last frame's averages.
        let taps = 2 * lead + 1
        let frames = (next - lead)...(next + lead)
        var sources: [(buffer: GPUBuffer, floats: Int)] = []
        var offsets: [Int: Int] = [:]
        var floats = 0
        for index in frames where entries.indices.contains(index) {
            guard let results = entries[index].results else { continue }
            offsets[index] = floats
            sources.append((results, entries[index].keys.count * stride))
            floats += entries[index].keys.count * stride
        }
        let lastAt = floats
        if let lastAverage, let results = lastAverage.results {
            sources.append((results, lastAverage.keys.count * stride))
            floats += lastAverage.keys.count * stride
        }
        var table: [Int32] = []
        for (face, key) in centre.keys.enumerated() {
            // A frame's offset in the window is set only when it is there and was measured.
            func raw(_ index: Int) -> Int? {
                offsets[index].flatMap { base in (index == next ? face : entries[index].face(key)).map { base + $0 * stride } }
            }
            for index in frames { table.append(raw(index).map(Int32.init) ?? -1) }
            let lastRaw = raw(next - 1), lastFace = lastAverage?.face(key)
            let repeatable = lastRaw != nil && lastFace != nil
            table.append(repeatable ? Int32(lastRaw!) : -1)
            table.append(repeatable ? Int32(lastAt + lastFace! * stride) : -1)
        }
        // Room for every tap and the last average at the widest face count, so that the
        // buffer's size does not change at the input's ends (a steady render makes no buffer).
        let widest = ((frames.filter(entries.indices.contains).map { entries[$0].keys.count }) + [lastAverage?.keys.count ?? 0]).max() ?? 1
        let window = try GPUBuffer.pooled(context: context, size: max(floats, (taps + 1) * widest * stride) * 4)
        var at = 0
        for source in sources {
            try recorder.copy(source.buffer, to: window, at: at * 4, size: source.floats * 4)
            at += source.floats
        }
        let tableBuffer = try GPUBuffer.pooled(context: context, size: table.count * 4)
        try table.withUnsafeBytes { try recorder.upload($0, to: tableBuffer) }
        let averaged = try output(size: centre.keys.count * stride * 4)
        let push = KernelLibrary.BeautyGainWindowPush(faceCount: Int32(centre.keys.count), stride: Int32(stride), taps: Int32(taps),
                                                      centre: Int32(lead))
        recorder.dispatch(kernel, [.buffer(window), .buffer(tableBuffer), .buffer(averaged)], push: push,
                          groups: ((centre.keys.count + 63) / 64, 1, 1))
        lastAverage = Entry(results: averaged, keys: centre.keys)
        return averaged
    }

    /// The next averages' buffer, at least `size` bytes (a larger one replaces it).
    private func output(size: Int) throws -> GPUBuffer {
        defer { nextOutput = (nextOutput + 1) % Self.outputCount }
        if nextOutput < outputs.count, outputs[nextOutput].size >= size { return outputs[nextOutput] }
        let buffer = try GPUBuffer(context: context, size: max(size, 256))
        if nextOutput < outputs.count { outputs[nextOutput] = buffer } else { outputs.append(buffer) }
        return buffer
    }
}
