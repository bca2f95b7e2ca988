import Foundation
@testable import VelvetGPU
import VelvetFiles
import VelvetKernels
import XCTest

/// Compiled pipelines on disk (`PipelineCache`): written on a miss, found by the next
/// process's context, and a damaged, truncated or foreign file ignored with a warning and
/// written anew. Each context here has its own folder and the validation layer on.
final class PipelineCacheTests: XCTestCase {
    private var root = ""

    override func setUpWithError() throws {
        root = NSTemporaryDirectory() + "velvet-pipeline-cache-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: root)
    }

    /// A fresh context (as a new process would open) building one kernel and waiting for its
    /// pipeline (compiled on the context's threads); checks the validation layer stayed silent.
    private func build(_ source: KernelSource = KernelLibrary.gaussianBlur, specialization: [String: SpecializationValue] = [:],
                       root: String?? = nil) throws -> PipelineCache {
        let context = try GPUContext(request: ProcessInfo.processInfo.environment["VELVET_DEVICE"], validation: true,
                                     pipelineCacheRoot: root ?? self.root)
        let kernel = try ComputeKernel(context: context, source: source, specialization: specialization)
        try context.finishCompiling()
        withExtendedLifetime(kernel) {}
        XCTAssertEqual(context.validationLog?.drain() ?? [], [])
        return context.pipelineCache
    }

    private func files(_ cache: PipelineCache) throws -> [String] {
        let directory = try XCTUnwrap(cache.directory)
        return try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".bin") }
            .map { (directory as NSString).appendingPathComponent($0) }
    }

    func testAMissIsWrittenAndTheNextContextFindsIt() throws {
        let first = try build()
        XCTAssertEqual([first.hits, first.misses], [0, 1])
        let written = try files(first)
        XCTAssertEqual(written.count, 1)
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: written[0]))
        XCTAssertEqual(Array(bytes.prefix(8)), PipelineCache.magic)
        XCTAssertGreaterThanOrEqual(bytes.count, PipelineCache.prefixBytes + PipelineCache.vulkanHeaderBytes)

        let second = try build()
        XCTAssertEqual([second.hits, second.misses], [1, 0])
        XCTAssertEqual(FileManager.default.contents(atPath: written[0]), bytes, "a hit rewrites nothing")
        XCTAssertEqual(second.warnings, [])

        // Another specialisation is another pipeline, so another file.
        let third = try build(KernelLibrary.beautyFitSample, specialization: ["MEASURE": .int(1)])
        let fourth = try build(KernelLibrary.beautyFitSample, specialization: ["MEASURE": .int(0)])
        XCTAssertEqual([third.misses, fourth.misses], [1, 1])
        XCTAssertEqual(try files(fourth).count, 3)
    }

    func testDamagedTruncatedAndForeignFilesAreIgnoredAndRewritten() throws {
        let path = try XCTUnwrap(try files(try build()).first)
        let good = try XCTUnwrap(FileManager.default.contents(atPath: path))
        var damaged = [UInt8](good)
        damaged[damaged.count - 1] ^= 0xff
        var foreign = [UInt8](good)
        foreign[PipelineCache.prefixBytes + 8] ^= 0x01 // the header's vendor ID
        var hash = FNV1a()
        hash.update(foreign[PipelineCache.prefixBytes...])
        foreign.replaceSubrange(8..<16, with: withUnsafeBytes(of: hash.value.littleEndian) { Array($0) })
        let cases: [(String, [UInt8])] = [("checksum does not match", damaged), ("another device", foreign),
                                          ("not a Velvet pipeline cache", Array(good.prefix(20))), ("not a Velvet pipeline cache", [])]
        for (reason, bytes) in cases {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let cache = try build()
            XCTAssertEqual([cache.hits, cache.misses], [0, 1], reason)
            XCTAssertEqual(cache.warnings.count, 1, reason)
            XCTAssertTrue(cache.warnings.first?.contains(reason) ?? false, "\(cache.warnings) should say \(reason)")
            let again = try build()
            XCTAssertEqual([again.hits, again.misses], [1, 0], "\(reason): rewritten valid")
        }
        // A FIFO in a file's place blocked the read or the write (every GPU command hung).
        try FileManager.default.removeItem(atPath: path)
        XCTAssertEqual(mkfifo(path, 0o600), 0)
        let cache = try build()
        XCTAssertEqual([cache.hits, cache.misses], [0, 1])
        XCTAssertTrue(cache.warnings.first?.contains("a FIFO, not a file") ?? false, "\(cache.warnings)")
        XCTAssertEqual([try build().hits], [1], "a file written in its place")
    }

    func testOffWritesNothing() throws {
        let cache = try build(root: .some(nil))
        XCTAssertNil(cache.directory)
        XCTAssertEqual([cache.hits, cache.misses], [0, 0])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root), [])
        XCTAssertNil(PipelineCache.root(environment: ["VELVET_PIPELINE_CACHE": "off", "HOME": "/root"]))
        XCTAssertEqual(PipelineCache.root(environment: ["XDG_CACHE_HOME": "/c", "HOME": "/h"]), "/c/velvet/pipelines")
        XCTAssertEqual(PipelineCache.root(environment: ["HOME": "/h"]), "/h/.cache/velvet/pipelines")
        XCTAssertEqual(PipelineCache.root(environment: ["VELVET_PIPELINE_CACHE": "/p", "XDG_CACHE_HOME": "/c"]), "/p")
    }
}
