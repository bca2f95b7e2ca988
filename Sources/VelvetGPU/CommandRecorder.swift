import CVulkan
import Foundation

/// A resource a kernel reads or writes, in binding order.
public enum GPUBinding {
    case storageImage(GPUImage)
    case sampledImage(GPUImage, GPUSampler)
    case buffer(GPUBuffer)
    /// `size` bytes of a buffer from `offset` (a multiple of the device's storage-buffer
    /// offset alignment), so validation sees which part a dispatch touches.
    case bufferRange(GPUBuffer, offset: Int, size: Int)
    /// `size` bytes of a buffer from `offset` read as 16-byte texels of `format` (a
    /// `readonly imageBuffer` of RGBA32F, or a `uimageBuffer` of RGBA32UI, read with
    /// `imageLoad`): on lavapipe that load is one gather where a storage-buffer load is a branch
    /// per lane and float (and a uniform texel buffer's `texelFetch` runs the sampler). Always
    /// a read (kernels declare it `readonly`): the recorder orders it as one. The
    /// view is made at the first binding and kept with the buffer (`prepareTexels` makes it
    /// ahead, as the NN planner does for its launches).
    case texels(GPUBuffer, offset: Int, size: Int, format: TexelFormat = .float)

    /// The whole of `buffer` read as texels of `format` (its size a multiple of 16 bytes, as
    /// every pooled buffer's is).
    public static func texels(_ buffer: GPUBuffer, as format: TexelFormat = .float) -> GPUBinding {
        .texels(buffer, offset: 0, size: buffer.size, format: format)
    }
}

/// How a dispatch is ordered against the commands recorded before it.
public enum DispatchOrdering: Sendable {
    /// A barrier first when it touches what an earlier command wrote, or writes what one read.
    case automatic
    /// A compute-to-compute barrier first, always: for a dispatch that reads what the
    /// dispatches before it wrote (transfers before it need `.automatic` or
    /// `synchronize(reading:writing:)`).
    case afterBarrier
    /// No barrier: the caller knows it conflicts with nothing since the last barrier
    /// (after `synchronize(reading:writing:)` for what came before), so it may run
    /// alongside the dispatches before it.
    case concurrent
}

/// Records a sequence of dispatches and copies into one command buffer.
///
/// Barriers are inserted automatically: a resource written by an earlier command and
/// touched by a later one (or read earlier and written later) gets a memory barrier in
/// between. Named sections are timed with GPU timestamps. Everything bound is retained
/// until the submission completes, so nothing is destroyed while the GPU may use it.
/// One recorder is used from one thread at a time, and submitted once.
public final class CommandRecorder {
    public let context: GPUContext
    let commandBuffer: VkCommandBuffer
    /// The lane it records for, and that lane's queue, which it is submitted to.
    public let lane: GPULane
    let queue: GPUQueue
    /// Nil while recording a `RecordedCommands` (a secondary command buffer, never submitted).
    private let slot: CommandSlot?
    private var queryPool: VkQueryPool? { slot?.queryPool }
    /// While recording a `RecordedCommands`: every resource its commands read and write.
    private(set) var replayReads: Set<ObjectIdentifier>?
    private(set) var replayWrites: Set<ObjectIdentifier>?
    private var sectionLabels: [String] = []
    private var openSection = false
    /// With tracing: when the open section began on the CPU (its recording is a span).
    private var sectionRecordStart: UInt64 = 0
    private var retained: [AnyObject] = []
    private var writtenSinceBarrier = Set<ObjectIdentifier>()
    private var readSinceBarrier = Set<ObjectIdentifier>()
    private var needsHostBarrier = false
    private var submitted = false
    /// The label of the section the caller began (its dispatches' own sections are
    /// `label/kernel` when `DispatchTiming` splits it).
    private var callerSection: String?
    /// The first kernel recorded whose pipeline failed to compile; `submit()` throws it.
    private(set) var pipelineFailure: Error?
    /// Set once the submission's fence signalled; only then may the slot be reused.
    fileprivate var completed = false

    static let maxSections = 128

    /// A recording for `lane`'s queue (by default the calling thread's lane).
    public init(context: GPUContext, lane: GPULane = .current) throws {
        self.context = context
        self.lane = lane
        queue = context.queue(for: lane)
        let slot = try queue.slots.take()
        var beginInfo = VkCommandBufferBeginInfo()
        beginInfo.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO
        beginInfo.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT.rawValue
        do {
            try vkCheck(vkBeginCommandBuffer(slot.commandBuffer, &beginInfo), "vkBeginCommandBuffer")
        } catch {
            queue.slots.give(slot)
            throw error
        }
        self.slot = slot
        self.commandBuffer = slot.commandBuffer
        if let queryPool = slot.queryPool { vkCmdResetQueryPool(commandBuffer, queryPool, 0, UInt32(Self.maxSections * 2)) }
        // Everything submitted to the queue before this recording is finished and visible
        // to it: a recorder may read what an earlier, unwaited submission wrote (the frame
        // upload goes ahead while the tracker records), and may overwrite what one read.
        recordMemoryBarrier()
    }

    /// Records into `commandBuffer`, a secondary command buffer begun by `RecordedCommands`:
    /// no timestamps, no barrier first (a replay is ordered by `replay`'s), never submitted.
    init(recordingFor context: GPUContext, lane: GPULane, into commandBuffer: VkCommandBuffer) {
        self.context = context
        self.lane = lane
        self.queue = context.queue(for: lane)
        self.slot = nil
        self.commandBuffer = commandBuffer
        replayReads = []
        replayWrites = []
    }

    deinit {
        // Reached when never submitted, or after the submission's fence was waited for. A
        // submission whose wait failed (device lost) keeps its slot out of the pool.
        if let slot, !submitted || completed { queue.slots.give(slot) }
    }

    /// Records `commands` (recorded once, `RecordedCommands`) here, behind a barrier when they
    /// touch what came before; they count as touching everything they read and write.
    public func replay(_ commands: RecordedCommands) {
        precondition(!submitted, "recorder already submitted")
        precondition(commands.context === context, "commands recorded for another device")
        precondition(commands.queue === queue, "commands recorded for another queue")
        synchronize(reads: commands.reads + commands.writes, writes: commands.writes)
        var buffer: VkCommandBuffer? = commands.commandBuffer
        vkCmdExecuteCommands(commandBuffer, 1, &buffer)
        retained.append(commands)
    }

    /// A `RecordedCommands` recording holds dispatches only (what it touches is tracked for
    /// `replay` through them).
    private func requireTransfers() {
        precondition(slot != nil, "a RecordedCommands recording holds dispatches only")
    }

    // MARK: - Dispatch

    /// Records one dispatch over `groups` workgroups of a kernel without a push-constant block
    /// (one with a block is a `TypedKernel`, which takes its block).
    public func dispatch(_ kernel: ComputeKernel, _ bindings: [GPUBinding],
                         groups: (x: Int, y: Int, z: Int), ordering: DispatchOrdering = .automatic) {
        precondition(kernel.source.pushConstantSize == 0,
                     "\(kernel.source.name) has a \(kernel.source.pushConstantSize) B push block: dispatch it as a TypedKernel")
        record(kernel, bindings, push: [], groups: .direct(groups), ordering: ordering)
    }

    /// Records one dispatch of `kernel` over `groups` workgroups, its push block written
    /// member by member at the offsets reflected from the kernel's SPIR-V.
    public func dispatch<Push>(_ kernel: TypedKernel<Push>, _ bindings: [GPUBinding], push: Push,
                               groups: (x: Int, y: Int, z: Int), ordering: DispatchOrdering = .automatic) {
        record(kernel.compute, bindings, push: kernel.bytes(of: push), groups: .direct(groups), ordering: ordering)
    }

    /// Records one dispatch of `kernel` over the workgroup counts an earlier dispatch wrote
    /// into `arguments` at `offset` (three UInt32, x y z: a `VkDispatchIndirectCommand`), so
    /// the work follows what the GPU found (a list it built) without a trip to the CPU.
    /// `arguments` counts as read here (a barrier first when it was just written).
    public func dispatch<Push>(_ kernel: TypedKernel<Push>, _ bindings: [GPUBinding], push: Push,
                               groupsIn arguments: GPUBuffer, offset: Int = 0) {
        precondition(offset >= 0 && offset % 4 == 0 && offset + 12 <= arguments.size,
                     "\(kernel.source.name): dispatch arguments at \(offset) of a \(arguments.size) B buffer")
        record(kernel.compute, bindings, push: kernel.bytes(of: push), groups: .indirect(arguments, offset: offset),
               ordering: .automatic)
    }

    /// Where a dispatch's workgroup counts come from.
    private enum Groups {
        case direct((x: Int, y: Int, z: Int))
        case indirect(GPUBuffer, offset: Int)
    }

    private func record(_ kernel: ComputeKernel, _ bindings: [GPUBinding], push: [UInt8],
                        groups: Groups, ordering: DispatchOrdering) {
        precondition(!submitted, "recorder already submitted")
        let declared = kernel.source.bindings
        precondition(declared.count == bindings.count,
                     "\(kernel.source.name) declares \(declared.count) bindings, got \(bindings.count)")
        if case .direct(let groups) = groups {
            let limits = context.limits.maxComputeWorkGroupCount
            precondition(groups.x >= 1 && groups.y >= 1 && groups.z >= 1
                         && groups.x <= Int(limits.0) && groups.y <= Int(limits.1) && groups.z <= Int(limits.2),
                         "\(kernel.source.name): workgroup count \(groups) outside the device's limits")
        }
        let pipeline: VkPipeline
        switch kernel.compiledPipeline() {
        case .success(let compiled): pipeline = compiled
        case .failure(let error):
            // Left out: this recorder will not be submitted.
            if pipelineFailure == nil { pipelineFailure = error }
            return
        }

        var reads: [ObjectIdentifier] = []
        var writes: [ObjectIdentifier] = []
        let arena = Arena()
        let writesInfo = zip(declared, bindings).map { declaration, binding -> VkWriteDescriptorSet in
            var write = VkWriteDescriptorSet()
            write.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET
            write.dstBinding = declaration.binding
            write.descriptorCount = 1
            write.descriptorType = declaration.kind.vkDescriptorType
            switch binding {
            case .storageImage(let image):
                precondition(declaration.kind == .storageImage, "\(kernel.source.name) binding \(declaration.binding) is \(declaration.kind)")
                write.pImageInfo = UnsafePointer(arena.pointer(to: VkDescriptorImageInfo(
                    sampler: nil, imageView: image.view, imageLayout: VK_IMAGE_LAYOUT_GENERAL)))
                reads.append(ObjectIdentifier(image))
                writes.append(ObjectIdentifier(image))
                retained.append(image)
            case .sampledImage(let image, let sampler):
                precondition(declaration.kind == .combinedImageSampler, "\(kernel.source.name) binding \(declaration.binding) is \(declaration.kind)")
                write.pImageInfo = UnsafePointer(arena.pointer(to: VkDescriptorImageInfo(
                    sampler: context.samplers[sampler], imageView: image.view, imageLayout: VK_IMAGE_LAYOUT_GENERAL)))
                reads.append(ObjectIdentifier(image))
                retained.append(image)
            case .buffer(let buffer), .bufferRange(let buffer, _, _):
                precondition(declaration.kind == .storageBuffer || declaration.kind == .uniformBuffer,
                             "\(kernel.source.name) binding \(declaration.binding) is \(declaration.kind)")
                var info = VkDescriptorBufferInfo(buffer: buffer.handle, offset: 0, range: VkDeviceSize(VK_WHOLE_SIZE))
                if case .bufferRange(_, let offset, let size) = binding {
                    let alignment = Int(context.limits.minStorageBufferOffsetAlignment)
                    precondition(offset >= 0 && size > 0 && offset + size <= buffer.size && offset % max(alignment, 1) == 0,
                                 "\(kernel.source.name) binding \(declaration.binding): range \(offset)+\(size) of a \(buffer.size) B buffer")
                    info.offset = VkDeviceSize(offset)
                    info.range = VkDeviceSize(size)
                }
                write.pBufferInfo = UnsafePointer(arena.pointer(to: info))
                reads.append(ObjectIdentifier(buffer))
                if declaration.kind == .storageBuffer { writes.append(ObjectIdentifier(buffer)) }
                retained.append(buffer)
            case .texels(let buffer, let offset, let size, let format):
                precondition(declaration.kind == .uniformTexelBuffer || declaration.kind == .storageTexelBuffer, "\(kernel.source.name) binding \(declaration.binding) is \(declaration.kind)")
                guard let view = try? buffer.texels(offset: offset, size: size, format: format) else { preconditionFailure("\(kernel.source.name) binding \(declaration.binding): no texel view") }
                write.pTexelBufferView = UnsafePointer(arena.pointer(to: Optional(view)))
                reads.append(ObjectIdentifier(buffer))
                retained.append(buffer)
            }
            return write
        }
        if case .indirect(let arguments, _) = groups {
            reads.append(ObjectIdentifier(arguments))
            retained.append(arguments)
        }
        replayReads?.formUnion(reads)
        replayWrites?.formUnion(writes)
        switch ordering {
        case .automatic:
            synchronize(reads: reads, writes: writes)
        case .afterBarrier:
            // Compute-only: earlier writes stay tracked, so a later copy still gets a full barrier.
            recordComputeBarrier()
            readSinceBarrier.formUnion(reads)
            writtenSinceBarrier.formUnion(writes)
        case .concurrent:
            readSinceBarrier.formUnion(reads)
            writtenSinceBarrier.formUnion(writes)
        }
        retained.append(kernel)

        vkCmdBindPipeline(commandBuffer, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline)
        if !writesInfo.isEmpty {
            context.cmdPushDescriptorSet(commandBuffer, VK_PIPELINE_BIND_POINT_COMPUTE, kernel.pipelineLayout, 0,
                                         UInt32(writesInfo.count), arena.array(writesInfo))
        }
        if !push.isEmpty {
            vkCmdPushConstants(commandBuffer, kernel.pipelineLayout, VK_SHADER_STAGE_COMPUTE_BIT.rawValue, 0,
                               UInt32(push.count), push)
        }
        if let section = callerSection, DispatchTiming.splits(section) {
            startSection(section + "/" + kernel.label)
        }
        switch groups {
        case .direct(let groups):
            vkCmdDispatch(commandBuffer, UInt32(groups.x), UInt32(groups.y), UInt32(groups.z))
        case .indirect(let arguments, let offset):
            vkCmdDispatchIndirect(commandBuffer, arguments.handle, VkDeviceSize(offset))
        }
    }

    /// Records a dispatch with enough workgroups to cover a `width` x `height` grid.
    public func dispatch(_ kernel: ComputeKernel, _ bindings: [GPUBinding], covering width: Int, _ height: Int) {
        dispatch(kernel, bindings, groups: Self.groups(kernel, covering: width, height))
    }

    /// Records a dispatch with enough workgroups to cover a `width` x `height` grid.
    public func dispatch<Push>(_ kernel: TypedKernel<Push>, _ bindings: [GPUBinding], push: Push,
                               covering width: Int, _ height: Int) {
        dispatch(kernel, bindings, push: push, groups: Self.groups(kernel.compute, covering: width, height))
    }

    private static func groups(_ kernel: ComputeKernel, covering width: Int, _ height: Int) -> (x: Int, y: Int, z: Int) {
        let size = kernel.source.workgroupSize
        return ((width + Int(size.x) - 1) / Int(size.x), (height + Int(size.y) - 1) / Int(size.y), 1)
    }

    // MARK: - Transfers

    /// Copies `bytes` (rows in the image's format, `rowPitch` bytes apart; tightly packed
    /// by default) into `image`.
    public func upload(_ bytes: UnsafeRawBufferPointer, to image: GPUImage, rowPitch: Int? = nil) throws {
        requireTransfers()
        let pitch = try Self.uploadPitch(of: bytes.count, into: image, rowPitch: rowPitch)
        let staging = try context.staging.take(context: context, size: pitch * image.height)
        if let destination = staging.contents.baseAddress, let source = bytes.baseAddress {
            Trace.span("upload.copy") { ParallelCopy.copy(to: destination, from: source, count: min(bytes.count, staging.count)) }
        }
        recordUpload(from: staging, to: image, pitch: pitch)
    }

    /// Copies bytes staged ahead (`StagedBytes`, rows `rowPitch` bytes apart; tightly packed by
    /// default) into `image`: only the GPU's copy is recorded here.
    public func upload(_ staged: StagedBytes, to image: GPUImage, rowPitch: Int? = nil) throws {
        requireTransfers()
        precondition(staged.context === context, "bytes staged for another device")
        let pitch = try Self.uploadPitch(of: staged.count, into: image, rowPitch: rowPitch)
        recordUpload(from: staged.lease, to: image, pitch: pitch)
    }

    /// The row pitch of an upload of `count` bytes into `image`, checked to cover it.
    private static func uploadPitch(of count: Int, into image: GPUImage, rowPitch: Int?) throws -> Int {
        let tightPitch = image.width * image.format.bytesPerPixel
        let pitch = rowPitch ?? tightPitch
        guard pitch >= tightPitch, pitch % image.format.bytesPerPixel == 0, count >= pitch * (image.height - 1) + tightPitch else {
            throw GPUError.invalidArgument("upload of \(count) B (row pitch \(pitch)) into a \(image.width)x\(image.height) \(image.format) image")
        }
        return pitch
    }

    private func recordUpload(from staging: StagingLease, to image: GPUImage, pitch: Int) {
        // The layout barriers order the copy after earlier use of the image and make it
        // visible to later commands, so the image needs no tracking here.
        transition(image, from: VK_IMAGE_LAYOUT_GENERAL, to: VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL)
        var region = Self.copyRegion(for: image)
        region.bufferRowLength = UInt32(pitch / image.format.bytesPerPixel)
        vkCmdCopyBufferToImage(commandBuffer, staging.buffer.handle, image.handle, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region)
        transition(image, from: VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, to: VK_IMAGE_LAYOUT_GENERAL)
        retained += [staging, image] as [AnyObject]
    }

    /// Schedules a copy of `image` to the CPU; its bytes are readable once the submission
    /// completes: rows `rowPitch` bytes apart (tightly packed by default), then
    /// `trailingBytes` more (what a reader may read past the end: FFmpeg's input padding).
    public func download(_ image: GPUImage, rowPitch: Int? = nil, trailingBytes: Int = 0) throws -> GPUReadback {
        requireTransfers()
        let tightPitch = image.width * image.format.bytesPerPixel
        let pitch = rowPitch ?? tightPitch
        guard pitch >= tightPitch, pitch % image.format.bytesPerPixel == 0, trailingBytes >= 0 else {
            throw GPUError.invalidArgument("download of a \(image.width)x\(image.height) \(image.format) image with row pitch \(pitch)")
        }
        let staging = try context.staging.take(context: context, size: pitch * image.height + trailingBytes)
        transition(image, from: VK_IMAGE_LAYOUT_GENERAL, to: VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL)
        var region = Self.copyRegion(for: image)
        region.bufferRowLength = UInt32(pitch / image.format.bytesPerPixel)
        vkCmdCopyImageToBuffer(commandBuffer, image.handle, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, staging.buffer.handle, 1, &region)
        transition(image, from: VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, to: VK_IMAGE_LAYOUT_GENERAL)
        retained.append(image)
        needsHostBarrier = true
        return GPUReadback(staging: staging)
    }

    /// Copies one image into another of the same size and format.
    public func copy(_ source: GPUImage, to destination: GPUImage) throws {
        requireTransfers()
        guard source.width == destination.width, source.height == destination.height else {
            throw GPUError.invalidArgument("copy between images of different size")
        }
        try copyRegion(from: source, to: destination, x: 0, y: 0, width: source.width, height: source.height)
    }

    /// Copies a rectangle between two images of the same format, to the same position or
    /// to (`toX`, `toY`).
    public func copyRegion(from source: GPUImage, to destination: GPUImage, x: Int, y: Int, width: Int, height: Int,
                           toX: Int? = nil, toY: Int? = nil) throws {
        requireTransfers()
        let (destinationX, destinationY) = (toX ?? x, toY ?? y)
        guard source.format == destination.format, x >= 0, y >= 0, width > 0, height > 0, destinationX >= 0, destinationY >= 0,
              x + width <= source.width, y + height <= source.height,
              destinationX + width <= destination.width, destinationY + height <= destination.height else {
            throw GPUError.invalidArgument("copy of \(width)x\(height) at \(x),\(y) outside the images or between formats")
        }
        transition(source, from: VK_IMAGE_LAYOUT_GENERAL, to: VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL)
        transition(destination, from: VK_IMAGE_LAYOUT_GENERAL, to: VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL)
        let layers = VkImageSubresourceLayers(aspectMask: VK_IMAGE_ASPECT_COLOR_BIT.rawValue, mipLevel: 0, baseArrayLayer: 0, layerCount: 1)
        var region = VkImageCopy(srcSubresource: layers, srcOffset: VkOffset3D(x: Int32(x), y: Int32(y), z: 0), dstSubresource: layers,
                                 dstOffset: VkOffset3D(x: Int32(destinationX), y: Int32(destinationY), z: 0),
                                 extent: VkExtent3D(width: UInt32(width), height: UInt32(height), depth: 1))
        vkCmdCopyImage(commandBuffer, source.handle, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, destination.handle,
                       VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region)
        transition(source, from: VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, to: VK_IMAGE_LAYOUT_GENERAL)
        transition(destination, from: VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, to: VK_IMAGE_LAYOUT_GENERAL)
        retained += [source, destination] as [AnyObject]
    }

    /// Sets every pixel of `image` to zero.
    public func clear(_ image: GPUImage) throws {
        requireTransfers()
        synchronize(reads: [], writes: [ObjectIdentifier(image)])
        var colour = VkClearColorValue()
        var range = VkImageSubresourceRange(aspectMask: VK_IMAGE_ASPECT_COLOR_BIT.rawValue, baseMipLevel: 0, levelCount: 1,
                                            baseArrayLayer: 0, layerCount: 1)
        vkCmdClearColorImage(commandBuffer, image.handle, VK_IMAGE_LAYOUT_GENERAL, &colour, 1, &range)
        retained.append(image)
    }

    /// Copies `bytes` into a buffer at `offset`.
    public func upload(_ bytes: UnsafeRawBufferPointer, to buffer: GPUBuffer, offset: Int = 0) throws {
        requireTransfers()
        guard offset >= 0, offset + bytes.count <= buffer.size else {
            throw GPUError.invalidArgument("upload of \(bytes.count) B at \(offset) into a \(buffer.size) B buffer")
        }
        guard !bytes.isEmpty else { return }
        let staging = try context.staging.take(context: context, size: bytes.count)
        staging.contents.copyMemory(from: bytes)
        synchronize(reads: [], writes: [ObjectIdentifier(buffer)])
        var region = VkBufferCopy(srcOffset: 0, dstOffset: VkDeviceSize(offset), size: VkDeviceSize(bytes.count))
        vkCmdCopyBuffer(commandBuffer, staging.buffer.handle, buffer.handle, 1, &region)
        retained += [staging, buffer] as [AnyObject]
    }

    /// Copies `size` bytes from the start of `source` into `destination` at byte `offset`.
    public func copy(_ source: GPUBuffer, to destination: GPUBuffer, at offset: Int = 0, size: Int) throws {
        requireTransfers()
        guard source !== destination, size > 0, offset >= 0, size <= source.size, offset + size <= destination.size else {
            throw GPUError.invalidArgument("copy of \(size) B of a \(source.size) B buffer to \(offset) in a \(destination.size) B one")
        }
        synchronize(reads: [ObjectIdentifier(source)], writes: [ObjectIdentifier(destination)])
        var region = VkBufferCopy(srcOffset: 0, dstOffset: VkDeviceSize(offset), size: VkDeviceSize(size))
        vkCmdCopyBuffer(commandBuffer, source.handle, destination.handle, 1, &region)
        retained += [source, destination] as [AnyObject]
    }

    /// Sets `size` bytes of a buffer from `offset` (both multiples of 4) to a repeated 32-bit `value`.
    public func fill(_ buffer: GPUBuffer, offset: Int = 0, size: Int, value: UInt32 = 0) throws {
        requireTransfers()
        guard offset >= 0, size > 0, offset % 4 == 0, size % 4 == 0, offset + size <= buffer.size else {
            throw GPUError.invalidArgument("fill of \(size) B at \(offset) in a \(buffer.size) B buffer")
        }
        synchronize(reads: [], writes: [ObjectIdentifier(buffer)])
        vkCmdFillBuffer(commandBuffer, buffer.handle, VkDeviceSize(offset), VkDeviceSize(size), value)
        retained.append(buffer)
    }

    /// Schedules a copy of a buffer to the CPU.
    public func download(_ buffer: GPUBuffer) throws -> GPUReadback {
        requireTransfers()
        let staging = try context.staging.take(context: context, size: buffer.size)
        synchronize(reads: [ObjectIdentifier(buffer)], writes: [ObjectIdentifier(staging.buffer)])
        var region = VkBufferCopy(srcOffset: 0, dstOffset: 0, size: VkDeviceSize(buffer.size))
        vkCmdCopyBuffer(commandBuffer, buffer.handle, staging.buffer.handle, 1, &region)
        retained.append(buffer)
        needsHostBarrier = true
        return GPUReadback(staging: staging)
    }

    private static func copyRegion(for image: GPUImage) -> VkBufferImageCopy {
        var region = VkBufferImageCopy()
        region.imageSubresource = VkImageSubresourceLayers(
            aspectMask: VK_IMAGE_ASPECT_COLOR_BIT.rawValue, mipLevel: 0, baseArrayLayer: 0, layerCount: 1)
        region.imageExtent = VkExtent3D(width: UInt32(image.width), height: UInt32(image.height), depth: 1)
        return region
    }

    // MARK: - Timing

    /// Starts a timed section (ends the open one). Timings come back from `GPUSubmission.wait()`.
    public func beginSection(_ label: String) {
        callerSection = label
        startSection(label)
    }

    private func startSection(_ label: String) {
        endTimestamp()
        guard let queryPool, sectionLabels.count < Self.maxSections else { return }
        vkCmdWriteTimestamp(commandBuffer, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queryPool, UInt32(sectionLabels.count * 2))
        sectionLabels.append(label)
        openSection = true
        if Trace.shared != nil { sectionRecordStart = DispatchTime.now().uptimeNanoseconds }
    }

    public func endSection() {
        callerSection = nil
        endTimestamp()
    }

    private func endTimestamp() {
        guard openSection, let queryPool else { return }
        vkCmdWriteTimestamp(commandBuffer, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queryPool, UInt32(sectionLabels.count * 2 - 1))
        openSection = false
        Trace.shared?.record("record:" + sectionLabels[sectionLabels.count - 1], since: sectionRecordStart)
    }

    // MARK: - Submission

    /// Ends recording and submits to the queue. Wait on the result before reading downloads.
    /// Throws, submitting nothing, if a recorded kernel's pipeline failed to compile.
    public func submit() throws -> GPUSubmission {
        precondition(!submitted, "recorder already submitted")
        guard let slot else { preconditionFailure("a RecordedCommands recording is replayed, not submitted") }
        if let pipelineFailure { throw pipelineFailure }
        endSection()
        if needsHostBarrier {
            var barrier = VkMemoryBarrier()
            barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER
            barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT.rawValue
            barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT.rawValue
            vkCmdPipelineBarrier(commandBuffer, VK_PIPELINE_STAGE_TRANSFER_BIT.rawValue, VK_PIPELINE_STAGE_HOST_BIT.rawValue,
                                 0, 1, &barrier, 0, nil, 0, nil)
        }
        try Trace.span("end") { try vkCheck(vkEndCommandBuffer(commandBuffer), "vkEndCommandBuffer") }
        try Trace.span("submit") { try queue.submit(commandBuffer, fence: slot.fence) }
        submitted = true
        return GPUSubmission(recorder: self, fence: slot.fence)
    }

    func timings() -> GPUTimings {
        guard let queryPool, let period = context.timestampPeriod, !sectionLabels.isEmpty else { return GPUTimings(sections: []) }
        var ticks = [UInt64](repeating: 0, count: sectionLabels.count * 2)
        let result = vkGetQueryPoolResults(context.handle, queryPool, 0, UInt32(ticks.count), ticks.count * 8, &ticks, 8,
                                           VK_QUERY_RESULT_64_BIT.rawValue | VK_QUERY_RESULT_WAIT_BIT.rawValue)
        guard result == VK_SUCCESS else { return GPUTimings(sections: []) }
        if let trace = Trace.shared, let clock = context.traceClock {
            func nanoseconds(_ tick: UInt64) -> UInt64 {
                UInt64(max(0, Double(clock.nanoseconds) + Double(Int64(bitPattern: tick &- clock.ticks)) * period))
            }
            for (index, label) in sectionLabels.enumerated() {
                trace.recordGPU(label, start: nanoseconds(ticks[index * 2]), end: nanoseconds(ticks[index * 2 + 1]))
            }
        }
        return GPUTimings(sections: sectionLabels.enumerated().map { index, label in
            let elapsed = ticks[index * 2 + 1] &- ticks[index * 2]
            return (label, Double(elapsed) * period / 1e6)
        })
    }

    /// Moves a freshly created image from UNDEFINED to GENERAL.
    func transitionToGeneral(_ image: GPUImage) {
        transition(image, from: VK_IMAGE_LAYOUT_UNDEFINED, to: VK_IMAGE_LAYOUT_GENERAL)
    }

    /// A layout change that also orders every earlier compute/transfer access of the
    /// image before every later one.
    private func transition(_ image: GPUImage, from old: VkImageLayout, to new: VkImageLayout) {
        var barrier = VkImageMemoryBarrier()
        barrier.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER
        barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT.rawValue | VK_ACCESS_TRANSFER_WRITE_BIT.rawValue
        barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT.rawValue | VK_ACCESS_SHADER_WRITE_BIT.rawValue
            | VK_ACCESS_TRANSFER_READ_BIT.rawValue | VK_ACCESS_TRANSFER_WRITE_BIT.rawValue
        barrier.oldLayout = old
        barrier.newLayout = new
        barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED
        barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED
        barrier.image = image.handle
        barrier.subresourceRange = VkImageSubresourceRange(
            aspectMask: VK_IMAGE_ASPECT_COLOR_BIT.rawValue, baseMipLevel: 0, levelCount: 1, baseArrayLayer: 0, layerCount: 1)
        let stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT.rawValue | VK_PIPELINE_STAGE_TRANSFER_BIT.rawValue
        vkCmdPipelineBarrier(commandBuffer, stages, stages, 0, 0, nil, 0, nil, 1, &barrier)
    }

    /// Every earlier compute/transfer write made visible to every later compute/transfer access.
    private func recordMemoryBarrier() {
        var barrier = VkMemoryBarrier()
        barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER
        barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT.rawValue | VK_ACCESS_TRANSFER_WRITE_BIT.rawValue
        barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT.rawValue | VK_ACCESS_SHADER_WRITE_BIT.rawValue
            | VK_ACCESS_TRANSFER_READ_BIT.rawValue | VK_ACCESS_TRANSFER_WRITE_BIT.rawValue
            | VK_ACCESS_INDIRECT_COMMAND_READ_BIT.rawValue
        let stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT.rawValue | VK_PIPELINE_STAGE_TRANSFER_BIT.rawValue
        // An indirect dispatch reads its workgroup counts in the draw-indirect stage.
        let destinationStages = stages | VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT.rawValue
        vkCmdPipelineBarrier(commandBuffer, stages, destinationStages, 0, 1, &barrier, 0, nil, 0, nil)
    }

    /// A barrier now if reading `reading` or writing `writing` would conflict with the
    /// commands since the last barrier; then they count as touched. Use it before a run of
    /// `.concurrent` dispatches, for what they touch.
    public func synchronize(reading: [GPUBuffer], writing: [GPUBuffer]) {
        precondition(!submitted, "recorder already submitted")
        replayReads?.formUnion((reading + writing).map(ObjectIdentifier.init))
        replayWrites?.formUnion(writing.map(ObjectIdentifier.init))
        synchronize(reads: (reading + writing).map(ObjectIdentifier.init), writes: writing.map(ObjectIdentifier.init))
    }

    /// Shader writes of earlier dispatches made visible to later dispatches.
    private func recordComputeBarrier() {
        var barrier = VkMemoryBarrier()
        barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER
        barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT.rawValue
        barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT.rawValue | VK_ACCESS_SHADER_WRITE_BIT.rawValue
        let stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT.rawValue
        vkCmdPipelineBarrier(commandBuffer, stage, stage, 0, 1, &barrier, 0, nil, 0, nil)
    }

    /// Inserts a compute/transfer memory barrier when this command touches what an
    /// earlier one wrote (read- or write-after-write) or writes what one read.
    private func synchronize(reads: [ObjectIdentifier], writes: [ObjectIdentifier]) {
        let hazard = reads.contains(where: writtenSinceBarrier.contains)
            || writes.contains(where: { writtenSinceBarrier.contains($0) || readSinceBarrier.contains($0) })
        if hazard {
            recordMemoryBarrier()
            writtenSinceBarrier.removeAll()
            readSinceBarrier.removeAll()
        }
        readSinceBarrier.formUnion(reads)
        writtenSinceBarrier.formUnion(writes)
    }
}

/// Bytes copied back from the GPU; valid once the submission that produced them completed.
public final class GPUReadback: @unchecked Sendable {
    private let staging: StagingLease
    init(staging: StagingLease) { self.staging = staging }
    public var bytes: [UInt8] { Array(staging.contents) }
    public var raw: UnsafeRawBufferPointer { UnsafeRawBufferPointer(staging.contents) }
}

/// GPU time per named section, in milliseconds.
public struct GPUTimings: Sendable {
    public var sections: [(label: String, milliseconds: Double)]
    public init(sections: [(label: String, milliseconds: Double)] = []) { self.sections = sections }
    public subscript(label: String) -> Double? {
        let matching = sections.filter { $0.label == label }
        return matching.isEmpty ? nil : matching.map(\.milliseconds).reduce(0, +)
    }
    public var totalMilliseconds: Double { sections.map(\.milliseconds).reduce(0, +) }
}

/// Submitted work. Keeps the recorder (and so every bound resource) alive until the
/// GPU is done; dropping an unwaited submission waits for it first.
public final class GPUSubmission: @unchecked Sendable {
    private let recorder: CommandRecorder
    private let fence: VkFence
    private var completed = false

    init(recorder: CommandRecorder, fence: VkFence) {
        self.recorder = recorder
        self.fence = fence
    }

    deinit {
        if !completed, Trace.span("fence.wait", waitForFence) == VK_SUCCESS { completed = true }
        recorder.completed = completed
    }

    /// Blocks until the GPU finished; returns the timed sections.
    @discardableResult
    public func wait() throws -> GPUTimings {
        if !completed {
            try Trace.span("fence.wait") { try vkCheck(waitForFence(), "vkWaitForFences") }
            completed = true
        }
        return Trace.span("query.results") { recorder.timings() }
    }

    private func waitForFence() -> VkResult {
        var fence: VkFence? = self.fence
        return vkWaitForFences(recorder.context.handle, 1, &fence, VkBool32(VK_TRUE), UInt64.max)
    }
}

/// GPU milliseconds per section label, summed over frames, from any thread (a look-ahead's
/// tracker adds from its own thread while the stages add from the GPU thread).
public final class GPUTimeTotals: @unchecked Sendable {
    private let lock = NSLock()
    private var sums: [String: Double] = [:]

    public init() {}

    /// Adds each section under its own label, or every section under `label`.
    public func add(_ timings: GPUTimings, as label: String? = nil) {
        lock.withLock { for section in timings.sections { sums[label ?? section.label, default: 0] += section.milliseconds } }
    }

    public var milliseconds: [String: Double] { lock.withLock { sums } }
}
