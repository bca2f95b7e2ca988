import Foundation
import VelvetGPU
import VelvetTestSupport
import XCTest

final class TransferTests: GPUTestCase {
    func testRoundTripIsBitExactForEveryFormat() throws {
        var random = SeededGenerator(state: 1)
        for format in PixelFormat.allCases {
            for (width, height) in [(1, 1), (7, 3), (130, 67)] {
                let image = try GPUImage(context: context, width: width, height: height, format: format)
                let bytes = (0..<image.byteCount).map { _ in UInt8.random(in: 0...255, using: &random) }
                let recorder = try CommandRecorder(context: context)
                try bytes.withUnsafeBytes { try recorder.upload($0, to: image) }
                let readback = try recorder.download(image)
                try recorder.submit().wait()
                XCTAssertEqual(readback.bytes, bytes, "\(format) \(width)x\(height)")
            }
        }
    }

    /// Transfers large enough to be copied on several threads (`ParallelCopy`) come back
    /// exact: each part lands where it belongs, none is left out or copied twice.
    func testLargeTransfersCopiedInPartsAreExact() throws {
        var random = SeededGenerator(state: 7)
        let image = try GPUImage(context: context, width: 701, height: 303, format: .rgba8)
        XCTAssertGreaterThan(ParallelCopy.parts(for: image.byteCount), ProcessInfo.processInfo.activeProcessorCount > 1 ? 1 : 0)
        let bytes = (0..<image.byteCount).map { _ in UInt8.random(in: 0...255, using: &random) }
        let recorder = try CommandRecorder(context: context)
        try bytes.withUnsafeBytes { try recorder.upload($0, to: image) }
        let readback = try recorder.download(image)
        try recorder.submit().wait()
        let got = readback.bytes
        XCTAssertTrue(got == bytes, "first wrong byte at \(got.indices.first { got[$0] != bytes[$0] } ?? -1)")

        for count in [ParallelCopy.minimumBytes - 1, ParallelCopy.minimumBytes, 3 * ParallelCopy.minimumBytes + 5] {
            let source = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 8) }
            var destination = [UInt8](repeating: 0, count: count + 1)
            source.withUnsafeBytes { from in
                destination.withUnsafeMutableBytes { to in
                    ParallelCopy.copy(to: to.baseAddress!, from: from.baseAddress!, count: count)
                }
            }
            XCTAssertTrue(Array(destination.prefix(count)) == source, "\(count) bytes: first wrong at \(source.indices.first { destination[$0] != source[$0] } ?? -1)")
            XCTAssertEqual(destination.last, 0, "nothing past the end")
        }
        let parts = 3
        let runs = Counter()
        ParallelCopy.run(parts: parts) { runs.add($0) }
        XCTAssertEqual(runs.values.sorted(), Array(0..<parts))
    }

    func testBufferRoundTrip() throws {
        let buffer = try GPUBuffer(context: context, size: 4099)
        let bytes = (0..<4099).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let recorder = try CommandRecorder(context: context)
        try bytes.withUnsafeBytes { try recorder.upload($0, to: buffer) }
        let readback = try recorder.download(buffer)
        try recorder.submit().wait()
        XCTAssertEqual(readback.bytes, bytes)
    }

    /// A buffer copied into another at an offset lands there, after what was written to the
    /// source on the same recorder, and leaves the rest of the destination as it was; a copy
    /// that does not fit is refused.
    func testBufferCopyAtAnOffset() throws {
        let source = try GPUBuffer(context: context, size: 64), destination = try GPUBuffer(context: context, size: 256)
        let bytes = (0..<64).map { UInt8($0 + 1) }
        let recorder = try CommandRecorder(context: context)
        try recorder.fill(destination, size: 256, value: 0xABAB_ABAB)
        try bytes.withUnsafeBytes { try recorder.upload($0, to: source) }
        try recorder.copy(source, to: destination, at: 100, size: 48)
        let readback = try recorder.download(destination)
        try recorder.submit().wait()
        XCTAssertEqual(Array(readback.bytes[100..<148]), Array(bytes[0..<48]))
        XCTAssertTrue(readback.bytes[0..<100].allSatisfy { $0 == 0xAB } && readback.bytes[148...].allSatisfy { $0 == 0xAB })
        let refused = try CommandRecorder(context: context)
        XCTAssertThrowsError(try refused.copy(source, to: destination, at: 220, size: 48))
        XCTAssertThrowsError(try refused.copy(source, to: destination, size: 65))
        XCTAssertThrowsError(try refused.copy(source, to: source, size: 4))
    }

    /// Frame after frame reuses the same command slot, staging and pooled buffers (per-frame Vulkan
    /// objects grew memory over long renders), results stay exact, and a context with
    /// pooled objects is still freed once nothing uses it.
    func testCommandSlotsAndStagingBuffersAreReused() throws {
        weak var released: GPUContext?
        try { () throws -> Void in
            let context = try GPUContext(request: ProcessInfo.processInfo.environment["VELVET_DEVICE"], validation: true)
            let image = try GPUImage(context: context, width: 33, height: 17, format: .rgba8)
            var createdAfterFirstFrame = 0
            for frame in 0..<20 {
                let bytes = (0..<image.byteCount).map { UInt8(truncatingIfNeeded: $0 &+ frame) }
                let recorder = try CommandRecorder(context: context)
                try bytes.withUnsafeBytes { try recorder.upload($0, to: image) }
                let readback = try recorder.download(image)
                // A stage's per-frame buffer (face geometry): pooled, so the same one comes back.
                let geometry = try GPUBuffer.pooled(context: context, size: 100 + frame)
                try bytes.withUnsafeBytes { try recorder.upload(UnsafeRawBufferPointer(rebasing: $0.prefix(100)), to: geometry) }
                let geometryReadback = try recorder.download(geometry)
                try recorder.submit().wait()
                XCTAssertEqual(readback.bytes, bytes, "frame \(frame)")
                XCTAssertEqual(Array(geometryReadback.bytes.prefix(100)), Array(bytes.prefix(100)), "frame \(frame)")
                if frame == 0 { createdAfterFirstFrame = context.vulkanObjectsCreated }
            }
            let pooled = context.pooledObjectCounts
            XCTAssertEqual(pooled.commandSlots, 1, "one slot serves every frame")
            XCTAssertEqual(pooled.stagingBuffers, 4, "the same four staging buffers (two uploads, two downloads) serve every frame")
            XCTAssertEqual(pooled.deviceBuffers, 1, "one pooled device buffer serves every frame")
            XCTAssertEqual(context.vulkanObjectsCreated, createdAfterFirstFrame, "no Vulkan object is made after the first frame")
            XCTAssertEqual(context.validationLog?.drain() ?? [], [])
            released = context
        }()
        XCTAssertNil(released, "the context is freed with pooled objects in it")
    }

    /// A request larger than the device's memory heap is a clear out-of-memory error, not a
    /// crash or a driver abort (an absurd frame size within the per-side limit ends here).
    func testMoreThanTheHeapIsAClearOutOfMemoryError() throws {
        XCTAssertThrowsError(try GPUBuffer(context: context, size: 1 << 46)) { error in
            XCTAssertTrue("\(error)".hasPrefix("out of GPU memory"), "\(error)")
        }
    }

    /// Bytes staged ahead (`StagedBytes`, as the decode thread stages a frame's planes) are
    /// what the upload writes: the source changed after staging does not reach the image; rows
    /// a pitch apart land as rows; too few staged bytes for the image is an error.
    func testStagedBytesAreUploadedAsStaged() throws {
        let image = try GPUImage(context: context, width: 601, height: 211, format: .rgba8)
        let pitch = image.width * 4 + 36
        var source = (0..<(pitch * image.height)).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ $0 >> 9) }
        let staged = try source.withUnsafeBytes { try StagedBytes(context: context, copying: UnsafeRawBufferPointer(rebasing: $0.prefix(pitch * (image.height - 1) + image.width * 4))) }
        let expected = (0..<image.height).flatMap { row in source[(row * pitch)..<(row * pitch + image.width * 4)] }
        for index in source.indices { source[index] = ~source[index] }
        let recorder = try CommandRecorder(context: context)
        try recorder.upload(staged, to: image, rowPitch: pitch)
        let readback = try recorder.download(image)
        try recorder.submit().wait()
        XCTAssertTrue(readback.bytes == expected, "first wrong byte at \(readback.bytes.indices.first { readback.bytes[$0] != expected[$0] } ?? -1)")

        let short = try source.withUnsafeBytes { try StagedBytes(context: context, copying: UnsafeRawBufferPointer(rebasing: $0.prefix(pitch * (image.height - 1)))) }
        XCTAssertThrowsError(try CommandRecorder(context: context).upload(short, to: image, rowPitch: pitch))
    }

    func testUploadOfWrongSizeIsAnError() throws {
        let image = try GPUImage(context: context, width: 4, height: 4, format: .rgba8)
        let recorder = try CommandRecorder(context: context)
        XCTAssertThrowsError(try [UInt8](repeating: 0, count: 10).withUnsafeBytes { try recorder.upload($0, to: image) })
    }

    func testAbsurdImageSizesAreRejected() throws {
        XCTAssertThrowsError(try GPUImage(context: context, width: 0, height: 10, format: .rgba8))
        XCTAssertThrowsError(try GPUImage(context: context, width: 1_000_000, height: 10, format: .rgba8)) { error in
            XCTAssertTrue("\(error)".contains("exceeds"), "\(error)")
        }
    }

    func testImagesShareMemoryBlocks() throws {
        // The context is shared by every test of the process: count the blocks these images add.
        let before = try context.memoryBlockCount
        let images = try (0..<64).map { _ in try GPUImage(context: context, width: 64, height: 64, format: .rgba16f) }
        XCTAssertEqual(images.count, 64)
        XCTAssertLessThanOrEqual(try context.memoryBlockCount - before, 4, "images must be sub-allocated, not one allocation each")
    }
}

/// Which parts `ParallelCopy.run` ran, from several threads.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [Int] = []
    func add(_ value: Int) { lock.withLock { seen.append(value) } }
    var values: [Int] { lock.withLock { seen } }
}
