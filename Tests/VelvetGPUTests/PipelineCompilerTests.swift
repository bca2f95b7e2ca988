import CVulkan
import Foundation
@testable import VelvetGPU
import VelvetKernels
import VelvetTestSupport
import XCTest

/// Pipelines compiled on `PipelineCompiler`'s threads: many kernels queued at once all
/// compile, dispatch with the same bytes as kernels compiled in their init, and write cache
/// files the next context finds; a failed compile is thrown by the recorder's submit and by
/// `finishCompiling()`; a kernel dropped before its compile ran leaves nothing behind. Every
/// context has the validation layer on (its thread-safety checks included) and its own folder.
final class PipelineCompilerTests: XCTestCase {
    private var root = ""

    override func setUpWithError() throws {
        root = NSTemporaryDirectory() + "velvet-pipeline-compiler-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Kernels of every kind the stages build (their specialisation constants at the defaults).
    private static let sources: [KernelSource] = [
        KernelLibrary.gaussianBlur, KernelLibrary.beautyBilateralExact, KernelLibrary.beautyBlend, KernelLibrary.beautyBoxMean,
        KernelLibrary.beautyFitBlur, KernelLibrary.beautyFitReduce, KernelLibrary.beautyFitSample, KernelLibrary.beautyGridBlur,
        KernelLibrary.beautyGridSlice, KernelLibrary.beautySkinMask, KernelLibrary.beautySpots, KernelLibrary.lutApply,
        KernelLibrary.makeupApply, KernelLibrary.reshapeWarp, KernelLibrary.rgbToYuv, KernelLibrary.yuvToRgb,
        KernelLibrary.faceDetectionDecode, KernelLibrary.nnConv2d, KernelLibrary.nnDepthwiseConv2d, KernelLibrary.nnElementwise,
    ]
    private static let sigmas: [Float] = [0.5, 1, 1.5, 2.5, 4, 7, 12, 32]

    private func makeContext(threads: Int, cache: String?? = nil) throws -> GPUContext {
        try GPUContext(request: ProcessInfo.processInfo.environment["VELVET_DEVICE"], validation: true,
                       pipelineCacheRoot: cache ?? root, compileThreads: threads)
    }

    func testManyKernelsQueuedAtOnceCompileDispatchAsInlineAndAreCached() throws {
        let context = try makeContext(threads: 4)
        // All queued before anything is recorded, as the stages' inits do.
        let kernels = try Self.sources.map { try ComputeKernel(context: context, source: $0) }
        let blurs = try Self.sigmas.map { try GaussianBlur(context: context, sigma: $0) }
        let threaded = try blurred(on: context, blurs: blurs)
        try context.finishCompiling()
        XCTAssertGreaterThan(context.pipelineCompiler.workerCompiles, 0, "no pipeline compiled on a worker thread")

        let inline = try makeContext(threads: 0, cache: .some(nil))
        let reference = try blurred(on: inline, blurs: try Self.sigmas.map { try GaussianBlur(context: inline, sigma: $0) })
        XCTAssertEqual(inline.pipelineCompiler.workerCompiles, 0)
        for (index, sigma) in Self.sigmas.enumerated() {
            XCTAssertEqual(threaded.outputs[index], reference.outputs[index], "sigma \(sigma): not the bytes of an inline-compiled blur")
            let expected = GaussianBlurTests.reference(threaded.input, width: 37, height: 29, sigma: Double(sigma))
            let error = zip(threaded.outputs[index], expected).map { abs(Double($0) / 255 - $1) }.max() ?? 1
            XCTAssertLessThanOrEqual(error, 1.0 / 255, "sigma \(sigma)")
        }

        // One file per kernel (the blurs share one), each valid for the next context.
        let cache = context.pipelineCache
        XCTAssertEqual(cache.hits + cache.misses, kernels.count + blurs.count)
        XCTAssertEqual(cache.warnings, [])
        let directory = try XCTUnwrap(cache.directory)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".bin") }.count,
                       Self.sources.count)
        let next = try makeContext(threads: 4)
        let again = try Self.sources.map { try ComputeKernel(context: next, source: $0) }
        try next.finishCompiling()
        XCTAssertEqual([next.pipelineCache.hits, next.pipelineCache.misses], [again.count, 0])
        XCTAssertEqual(next.pipelineCache.warnings, [])
        for checked in [context, inline, next] { XCTAssertEqual(checked.validationLog?.drain() ?? ["no log"], []) }
    }

    func testAFailedCompileIsThrownBySubmitAndFinishCompiling() throws {
        let context = try makeContext(threads: 4)
        context.pipelineCompiler.injectFailure(kernel: KernelLibrary.gaussianBlur.name)
        let expected = GPUError.vulkan(call: "vkCreateComputePipelines(gaussian_blur)", result: VK_ERROR_INITIALIZATION_FAILED.rawValue)
        // Queued, so the init cannot know yet.
        let blur = try GaussianBlur(context: context, sigma: 2)
        let good = try TypedKernel<KernelLibrary.NnElementwisePush>(context: context)

        let image = try GPUImage(context: context, width: 16, height: 8, format: .rgba8)
        let scratch = try GPUImage(context: context, width: 16, height: 8, format: .rgba16f)
        let output = try GPUImage(context: context, width: 16, height: 8, format: .rgba8)
        let recorder = try CommandRecorder(context: context)
        try blur.record(on: recorder, source: image, destination: output, scratch: scratch)
        XCTAssertThrowsError(try recorder.submit()) { XCTAssertEqual($0 as? GPUError, expected) }
        XCTAssertThrowsError(try context.finishCompiling()) { XCTAssertEqual($0 as? GPUError, expected) }

        // The other kernel is unaffected: a[0] = relu(a[0]) in place.
        let buffer = try GPUBuffer(context: context, size: 16)
        let working = try CommandRecorder(context: context)
        try [Float(-2), 3, -4, 5].withUnsafeBytes { try working.upload($0, to: buffer) }
        let push = KernelLibrary.NnElementwisePush(aOffset: 0, outOffset: 0, bOffset: 0, pixels: 1, c4Count: 1, channels: 4, op: 0,
                                                   bBroadcast: 0, bC4: 1, act: 1, alphaOffset: 0, addendOffset: 0, hasAddend: 0)
        working.dispatch(good, [.buffer(buffer), .buffer(buffer), .buffer(buffer), .buffer(buffer), .buffer(buffer)],
                         push: push, groups: (1, 1, 1))
        let readback = try working.download(buffer)
        try working.submit().wait()
        XCTAssertEqual(readback.bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }, [0, 3, 0, 5])

        // Nothing cached for the failed kernel.
        let directory = try XCTUnwrap(context.pipelineCache.directory)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".bin") }.count, 1)

        // Compiled in the init, the failure is the init's.
        let inline = try makeContext(threads: 0)
        inline.pipelineCompiler.injectFailure(kernel: KernelLibrary.gaussianBlur.name)
        XCTAssertThrowsError(try GaussianBlur(context: inline)) { XCTAssertEqual($0 as? GPUError, expected) }
        XCTAssertNoThrow(try inline.finishCompiling())
        for checked in [context, inline] { XCTAssertEqual(checked.validationLog?.drain() ?? ["no log"], []) }
    }

    func testKernelsDroppedBeforeTheirCompileLeaveNothingBehind() throws {
        let context = try makeContext(threads: 2, cache: .some(nil))
        for _ in 0..<3 {
            // Released at once: some still queued (dropped), some compiling (waited for).
            for source in Self.sources { _ = try ComputeKernel(context: context, source: source) }
        }
        try context.finishCompiling()
        let kept = try ComputeKernel(context: context, source: KernelLibrary.nnElementwise)
        XCTAssertNoThrow(try kept.compiledPipeline().get())
        XCTAssertEqual(context.validationLog?.drain() ?? ["no log"], [])
    }

    func testThreadCountFromTheEnvironment() {
        XCTAssertEqual(PipelineCompiler.threadLimit(environment: ["VELVET_COMPILE_THREADS": "3"]), 3)
        XCTAssertEqual(PipelineCompiler.threadLimit(environment: ["VELVET_COMPILE_THREADS": "0"]), 0)
        XCTAssertEqual(PipelineCompiler.threadLimit(environment: [:]), min(ProcessInfo.processInfo.activeProcessorCount, 8))
        for ignored in ["-1", "two", ""] {
            XCTAssertEqual(PipelineCompiler.threadLimit(environment: ["VELVET_COMPILE_THREADS": ignored]),
                           PipelineCompiler.threadLimit(environment: [:]), ignored)
        }
        XCTAssertGreaterThan(PipelineCompiler.threadLimit(environment: [:]), 0)
    }

    /// Blurs one noisy rgba8 image with each blur, in one recording.
    private func blurred(on context: GPUContext, blurs: [GaussianBlur]) throws -> (input: [Double], outputs: [[UInt8]]) {
        let (width, height) = (37, 29)
        var random = SeededGenerator(state: 16)
        let bytes = (0..<(width * height * 4)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let source = try GPUImage(context: context, width: width, height: height, format: .rgba8)
        let scratch = try GPUImage(context: context, width: width, height: height, format: .rgba16f)
        let recorder = try CommandRecorder(context: context)
        try bytes.withUnsafeBytes { try recorder.upload($0, to: source) }
        let readbacks = try blurs.map { blur -> GPUReadback in
            let destination = try GPUImage(context: context, width: width, height: height, format: .rgba8)
            try blur.record(on: recorder, source: source, destination: destination, scratch: scratch)
            return try recorder.download(destination)
        }
        try recorder.submit().wait()
        return (bytes.map { Double($0) / 255 }, readbacks.map(\.bytes))
    }
}
