import CVulkan
import Foundation

/// Sub-allocates images and buffers from a few large VkDeviceMemory blocks
/// (64 MiB each, or one block sized to an oversized request) instead of one
/// vkAllocateMemory per resource. Buffers and images live in separate blocks so
/// bufferImageGranularity never matters. Thread-safe.
final class MemoryAllocator: @unchecked Sendable {
    enum Residency: Sendable { case deviceLocal, hostVisible }
    enum ResourceKind: Sendable { case buffer, image }

    struct Allocation {
        let memory: VkDeviceMemory
        let offset: UInt64
        let size: UInt64
        /// Host address of `offset` for host-visible memory.
        let mapped: UnsafeMutableRawPointer?
        fileprivate let blockID: Int
    }

    static let blockSize: UInt64 = 64 << 20

    private final class Block {
        let id: Int
        let memory: VkDeviceMemory
        let size: UInt64
        let typeIndex: UInt32
        let kind: ResourceKind
        let mapped: UnsafeMutableRawPointer?
        /// Free ranges sorted by offset, never adjacent (merged on free).
        var free: [(offset: UInt64, size: UInt64)]
        init(id: Int, memory: VkDeviceMemory, size: UInt64, typeIndex: UInt32, kind: ResourceKind, mapped: UnsafeMutableRawPointer?) {
            (self.id, self.memory, self.size, self.typeIndex, self.kind, self.mapped) = (id, memory, size, typeIndex, kind, mapped)
            free = [(0, size)]
        }
    }

    private let device: VkDevice
    private let properties: VkPhysicalDeviceMemoryProperties
    private let lock = NSLock()
    private var blocks: [Int: Block] = [:]
    private var nextBlockID = 0

    private let tally: ObjectTally

    init(device: VkDevice, properties: VkPhysicalDeviceMemoryProperties, tally: ObjectTally) {
        self.tally = tally
        self.device = device
        self.properties = properties
    }

    /// Number of VkDeviceMemory blocks currently held (tests check that images share them).
    var blockCount: Int { lock.withLock { blocks.count } }

    var blockBytes: UInt64 { lock.withLock { blocks.values.map(\.size).reduce(0, +) } }

    func allocate(_ requirements: VkMemoryRequirements, residency: Residency, kind: ResourceKind) throws -> Allocation {
        let typeIndex = try memoryType(bits: requirements.memoryTypeBits, residency: residency)
        // More than the whole heap can never succeed: say so plainly instead of asking the
        // driver (some drivers abort or overcommit rather than fail such a request).
        let heapSize = heapSize(of: typeIndex)
        guard requirements.size <= heapSize else {
            throw GPUError.outOfMemory("\(requirements.size >> 20) MiB requested, the device's memory heap holds \(heapSize >> 20) MiB")
        }
        return try lock.withLock {
            // Residency is part of the key: on unified-memory devices (lavapipe) one memory
            // type serves both, but only host-visible blocks are mapped.
            let mapped = residency == .hostVisible
            for block in blocks.values.sorted(by: { $0.id < $1.id })
            where block.typeIndex == typeIndex && block.kind == kind && (block.mapped != nil) == mapped {
                if let allocation = take(requirements, from: block) { return allocation }
            }
            let block = try newBlock(size: max(Self.blockSize, requirements.size), typeIndex: typeIndex,
                                     kind: kind, map: residency == .hostVisible)
            guard let allocation = take(requirements, from: block) else {
                throw GPUError.outOfMemory("\(requirements.size) bytes do not fit a fresh block")
            }
            return allocation
        }
    }

    func free(_ allocation: Allocation) {
        lock.withLock {
            guard let block = blocks[allocation.blockID] else { return }
            var ranges = block.free
            let index = ranges.firstIndex { $0.offset > allocation.offset } ?? ranges.count
            ranges.insert((allocation.offset, allocation.size), at: index)
            var merged: [(offset: UInt64, size: UInt64)] = []
            for range in ranges {
                if let last = merged.last, last.offset + last.size == range.offset {
                    merged[merged.count - 1].size += range.size
                } else {
                    merged.append(range)
                }
            }
            block.free = merged
            // An empty block beyond the first of its kind goes back to the driver.
            if merged.count == 1, merged[0].size == block.size,
               blocks.values.contains(where: { $0.id != block.id && $0.typeIndex == block.typeIndex && $0.kind == block.kind
                                                 && ($0.mapped != nil) == (block.mapped != nil) }) {
                release(block)
            }
        }
    }

    func releaseAll() {
        lock.withLock { blocks.values.forEach(release) }
    }

    private func heapSize(of typeIndex: UInt32) -> UInt64 {
        var properties = self.properties
        let heapIndex = withUnsafeBytes(of: &properties.memoryTypes) { raw in
            raw.bindMemory(to: VkMemoryType.self)[Int(typeIndex)].heapIndex
        }
        return withUnsafeBytes(of: &properties.memoryHeaps) { raw in raw.bindMemory(to: VkMemoryHeap.self)[Int(heapIndex)].size }
    }

    // MARK: - Internals (called with the lock held)

    private func take(_ requirements: VkMemoryRequirements, from block: Block) -> Allocation? {
        let alignment = max(requirements.alignment, 1)
        for (index, range) in block.free.enumerated() {
            let start = (range.offset + alignment - 1) / alignment * alignment
            guard start + requirements.size <= range.offset + range.size else { continue }
            var replacement: [(offset: UInt64, size: UInt64)] = []
            if start > range.offset { replacement.append((range.offset, start - range.offset)) }
            let end = start + requirements.size
            if end < range.offset + range.size { replacement.append((end, range.offset + range.size - end)) }
            block.free.replaceSubrange(index...index, with: replacement)
            // The alignment padding before `start` stays free, so the allocation is exactly [start, end).
            return Allocation(memory: block.memory, offset: start, size: requirements.size,
                              mapped: block.mapped.map { $0 + Int(start) }, blockID: block.id)
        }
        return nil
    }

    private func newBlock(size: UInt64, typeIndex: UInt32, kind: ResourceKind, map: Bool) throws -> Block {
        var info = VkMemoryAllocateInfo()
        info.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO
        info.allocationSize = size
        info.memoryTypeIndex = typeIndex
        var memory: VkDeviceMemory? = nil
        // Traced: a driver may clear the block's pages here, milliseconds on a frame's path.
        let result = Trace.span("gpu.memory.block") { vkAllocateMemory(device, &info, nil, &memory) }
        if result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY {
            throw GPUError.outOfMemory("could not allocate a \(size >> 20) MiB block")
        }
        try vkCheck(result, "vkAllocateMemory")
        tally.add()
        var mapped: UnsafeMutableRawPointer? = nil
        if map {
            try vkCheck(vkMapMemory(device, memory, 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory")
        }
        let block = Block(id: nextBlockID, memory: memory!, size: size, typeIndex: typeIndex, kind: kind, mapped: mapped)
        nextBlockID += 1
        blocks[block.id] = block
        return block
    }

    private func release(_ block: Block) {
        if block.mapped != nil { vkUnmapMemory(device, block.memory) }
        vkFreeMemory(device, block.memory, nil)
        blocks[block.id] = nil
    }

    private func memoryType(bits: UInt32, residency: Residency) throws -> UInt32 {
        let types = withUnsafeBytes(of: properties.memoryTypes) {
            Array($0.bindMemory(to: VkMemoryType.self).prefix(Int(properties.memoryTypeCount)))
        }
        let hostVisible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT.rawValue | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT.rawValue
        let preferences: [UInt32] = residency == .deviceLocal
            ? [VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT.rawValue, 0]
            : [hostVisible | VK_MEMORY_PROPERTY_HOST_CACHED_BIT.rawValue, hostVisible]
        for wanted in preferences {
            for (index, type) in types.enumerated() where bits & (1 << UInt32(index)) != 0 && type.propertyFlags & wanted == wanted {
                return UInt32(index)
            }
        }
        throw GPUError.unsupported("no suitable memory type for \(residency)")
    }
}
