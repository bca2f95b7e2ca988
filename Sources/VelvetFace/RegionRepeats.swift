import VelvetGPU
import VelvetKernels

/// Compares each frame with the last (`face_region_change.comp`, on the GPU, against a copy
/// of the last frame: its size and format, 8 bytes a pixel for the working image; or against
/// the caller's own image of the last frame, `LastFrame.given`, with no copy). Finds the
/// tracked faces whose region repeats the last frame's exactly (such a face keeps its
/// landmarks, so a repeated picture gives a repeated render, whatever the mesh would make of
/// a ROI that moved on), and cuts: a mean RGB change over the whole frame (sampled on a grid
/// of about 128 columns) above `cutChange`.
final class RegionRepeats {
    /// What one frame's comparison found.
    struct Finding {
        /// Per region: it holds the same pixels as in the last frame.
        var repeated: [Bool]
        var isCut: Bool
    }

    /// The mean absolute change per channel (0...1) over the frame that makes a cut: a new
    /// shot rather than motion (a face crossing the frame changes a small part of it).
    static let cutChange: Float = 0.12
    private static let frameColumns = 128

    private let context: GPUContext
    private let kernel: TypedKernel<KernelLibrary.FaceRegionChangePush>
    /// On CPU devices the face regions are walked a column at a time, stopping at the first
    /// change (`WALK_ROWS` in the kernel); nil on GPUs, which compare every pixel at once.
    private let columnWalk: TypedKernel<KernelLibrary.FaceRegionChangePush>?
    static let walkRows = 32
    private let changes: GPUBuffer
    private var previous: GPUImage?
    /// Whether a frame was recorded since the reset (the next one has a frame before it).
    private var previousValid = false
    /// Whether `previous` holds a copy of that frame (`LastFrame.copied`).
    private var copyHoldsLast = false
    let capacity: Int

    /// `walksColumns` nil: the device's way (walked on a CPU device).
    init(context: GPUContext, capacity: Int, walksColumns: Bool? = nil) throws {
        self.context = context
        self.capacity = capacity
        kernel = try TypedKernel(context: context)
        columnWalk = walksColumns ?? (context.device.kind == .cpu)
            ? try TypedKernel(context: context, specialization: ["WALK_ROWS": .int(Int32(Self.walkRows))]) : nil
        changes = try GPUBuffer(context: context, size: 8 * (capacity + 1))
    }

    /// Forgets the last frame (the next one repeats nothing).
    func reset() { previousValid = false; copyHoldsLast = false }

    struct Pending {
        let readback: GPUReadback
        let count: Int
        let frameSamples: Int
    }

    /// Records the comparison of `image` with the last frame inside each region and over the
    /// whole frame, then keeps `image` as the last frame. nil when there is nothing to compare.
    func record(on recorder: CommandRecorder, image: GPUImage, last: FaceTracker.LastFrame = .copied, regions: [PixelRegion?]) throws -> Pending? {
        if let previous, previous.width != image.width || previous.height != image.height || previous.format != image.format {
            self.previous = nil
            copyHoldsLast = false
        }
        let reference: GPUImage?
        switch last {
        case .copied: reference = copyHoldsLast ? previous : nil
        case .given(let given): reference = given.flatMap { $0.width == image.width && $0.height == image.height && $0.format == image.format ? $0 : nil }
        }
        var pending: Pending?
        if previousValid, let previous = reference, regions.count <= capacity {
            try recorder.fill(changes, size: 8 * (capacity + 1), value: 0)
            // `walk`: the changed flag alone (a face region's); the frame's sum needs every sample.
            func compare(_ region: PixelRegion, entry: Int, step: Int, walk: Bool = false) -> Int {
                let columns = (region.width + step - 1) / step, rows = (region.height + step - 1) / step
                let push = KernelLibrary.FaceRegionChangePush(origin: SIMD2(Int32(region.x), Int32(region.y)),
                                                              size: SIMD2(Int32(columns), Int32(rows)),
                                                              entry: Int32(entry), step: Int32(step))
                let bindings: [GPUBinding] = [.sampledImage(image, .nearest), .sampledImage(previous, .nearest), .buffer(changes)]
                if walk, let columnWalk {
                    recorder.dispatch(columnWalk, bindings, push: push, covering: columns, (rows + Self.walkRows - 1) / Self.walkRows)
                } else {
                    recorder.dispatch(kernel, bindings, push: push, covering: columns, rows)
                }
                return columns * rows
            }
            for (index, region) in regions.enumerated() {
                // A face without a region always counts as changed.
                guard let region, !region.isEmpty else {
                    try recorder.fill(changes, offset: 8 * (index + 1), size: 4, value: 1)
                    continue
                }
                _ = compare(region, entry: index + 1, step: 1, walk: true)
            }
            let step = max(1, max(image.width, image.height) / Self.frameColumns)
            let samples = compare(PixelRegion(x: 0, y: 0, width: image.width, height: image.height), entry: 0, step: step)
            pending = Pending(readback: try recorder.download(changes), count: regions.count, frameSamples: samples)
        }
        if case .copied = last {
            let copy = try previous ?? GPUImage(context: context, width: image.width, height: image.height, format: image.format)
            previous = copy
            try recorder.copy(image, to: copy)
            copyHoldsLast = true
        } else {
            copyHoldsLast = false
        }
        previousValid = true
        return pending
    }

    /// What a completed `record` found (nothing repeated, no cut, without one).
    static func finding(_ pending: Pending?, count: Int) -> Finding {
        guard let pending, pending.count == count else { return Finding(repeated: [Bool](repeating: false, count: count), isCut: false) }
        func word(_ index: Int) -> UInt32 { pending.readback.raw.loadUnaligned(fromByteOffset: 4 * index, as: UInt32.self) }
        let meanChange = Float(word(1)) / 64 / Float(3 * max(pending.frameSamples, 1))
        return Finding(repeated: (0..<count).map { word(2 * ($0 + 1)) == 0 }, isCut: meanChange > cutChange)
    }
}
