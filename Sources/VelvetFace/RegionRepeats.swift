import VelvetGPU
import VelvetKernels

/// Finds the tracked faces whose region of the frame repeats the previous frame's exactly
/// (`face_region_change.comp`): such a face keeps its landmarks, so a repeated picture gives
/// a repeated render, whatever the mesh would make of a ROI that moved on. Keeps a copy of
/// the last frame (its size and format: 8 bytes a pixel for the working image).
final class RegionRepeats {
    private let context: GPUContext
    private let kernel: ComputeKernel
    private let flags: GPUBuffer
    private var previous: GPUImage?
    private var previousValid = false
    let capacity: Int

    init(context: GPUContext, capacity: Int) throws {
        self.context = context
        self.capacity = capacity
        kernel = try ComputeKernel(context: context, source: KernelLibrary.faceRegionChange)
        flags = try GPUBuffer(context: context, size: 4 * capacity)
    }

    /// Forgets the last frame (the next one repeats nothing).
    func reset() { previousValid = false }

    /// Records the comparison of `image` with the last frame inside each region, then keeps
    /// `image` as the last frame. nil when there is nothing to compare with.
    func record(on recorder: CommandRecorder, image: GPUImage, regions: [PixelRegion?]) throws -> GPUReadback? {
        if let previous, previous.width != image.width || previous.height != image.height || previous.format != image.format {
            self.previous = nil
            previousValid = false
        }
        var readback: GPUReadback?
        if previousValid, let previous, !regions.isEmpty, regions.count <= capacity {
            try recorder.fill(flags, size: 4 * capacity, value: 0)
            for (index, region) in regions.enumerated() {
                // A face without a region always counts as changed.
                guard let region, !region.isEmpty else {
                    try recorder.fill(flags, offset: 4 * index, size: 4, value: 1)
                    continue
                }
                var push = PushConstants()
                push.ivec2(Int32(region.x), Int32(region.y))
                push.ivec2(Int32(region.width), Int32(region.height))
                push.int(Int32(index))
                recorder.dispatch(kernel, [.sampledImage(image, .nearest), .sampledImage(previous, .nearest), .buffer(flags)],
                                  push: push, covering: region.width, region.height)
            }
            readback = try recorder.download(flags)
        }
        let copy = try previous ?? GPUImage(context: context, width: image.width, height: image.height, format: image.format)
        previous = copy
        try recorder.copy(image, to: copy)
        previousValid = true
        return readback
    }

    /// Which regions repeated, from a completed `record` readback (none without one).
    static func repeated(_ readback: GPUReadback?, count: Int) -> [Bool] {
        guard let readback else { return [Bool](repeating: false, count: count) }
        return (0..<count).map { readback.raw.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self) == 0 }
    }
}
