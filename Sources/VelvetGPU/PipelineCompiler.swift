import CVulkan
import Foundation
import Synchronization

/// Compiles the context's compute pipelines on a few worker threads. A kernel's init only
/// queues its pipeline: vkCreateComputePipelines is what a cold start costs (about 90
/// kernels, 6 s one after another on the H200 with empty caches), and the stages build their
/// kernels one after another, so queued they compile side by side and alongside the rest of
/// the setup. A pipeline is awaited where it is first recorded (`result(of:)`); one still
/// queued then is compiled on the waiting thread rather than behind the others.
///
/// `VELVET_COMPILE_THREADS` sets the workers (default: the processor count, at most 8);
/// 0 compiles each pipeline in its kernel's init, on the caller's thread.
final class PipelineCompiler: @unchecked Sendable {
    /// Worker threads at most; 0: `ComputeKernel` compiles in its init.
    let threadLimit: Int
    private let condition = NSCondition()
    private var queued: [PipelineBuild] = []
    private var unfinished = 0
    private var workers = 0
    private var firstFailure: Error?
    private var failingKernels: Set<String> = []
    private var compiledByWorkers = 0

    static let defaultThreadLimit = min(ProcessInfo.processInfo.activeProcessorCount, 8)

    /// - Parameter threadLimit: 0 (or less): no workers.
    init(threadLimit: Int) {
        self.threadLimit = max(threadLimit, 0)
        Self.live.withLock { $0.append(Weak(self)) }
    }

    private struct Weak { weak var compiler: PipelineCompiler?; init(_ compiler: PipelineCompiler) { self.compiler = compiler } }
    private static let live = Mutex<[Weak]>([])

    /// Before the process exits: every compiler's queued pipelines dropped and those being
    /// compiled waited for. A worker inside the driver (and the validation layer) while exit
    /// unloads them crashed the process (SIGSEGV on a usage refusal made after an effect's
    /// kernels were queued).
    static func stopAllForExit() {
        for compiler in live.withLock({ $0.compactMap(\.compiler) }) { compiler.stopForExit() }
    }

    private func stopForExit() {
        condition.lock()
        defer { condition.unlock() }
        for build in queued { build.state = .done(.failure(GPUError.unsupported("the process is ending"))) }
        unfinished -= queued.count
        queued.removeAll()
        condition.broadcast()
        while unfinished > 0 { condition.wait() }
    }

    /// `VELVET_COMPILE_THREADS` when it is a count, else the default.
    static func threadLimit(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int {
        guard let text = environment["VELVET_COMPILE_THREADS"], let count = Int(text), count >= 0 else { return defaultThreadLimit }
        return count
    }

    /// Queues `compile` (or, with no workers, runs it now).
    func start(_ compile: @escaping () throws -> VkPipeline) -> PipelineBuild {
        let build = PipelineBuild(compile)
        guard threadLimit > 0 else {
            build.state = .done(Result { try compile() })
            return build
        }
        let spawns = condition.withLock { () -> Bool in
            queued.append(build)
            unfinished += 1
            guard workers < min(threadLimit, queued.count) else { return false }
            workers += 1
            return true
        }
        if spawns {
            let thread = Thread { [self] in
                Trace.nameThread("velvet-compile")
                work()
            }
            thread.start()
        }
        return build
    }

    /// The pipeline, or why it could not be created; waits for it to be compiled.
    func result(of build: PipelineBuild) -> Result<VkPipeline, Error> {
        condition.lock()
        defer { condition.unlock() }
        if case .done(let result) = build.state { return result }
        // Traced: a recording that waits here is held up by the compile threads.
        let traceStart = DispatchTime.now().uptimeNanoseconds
        defer { Trace.shared?.record("pipeline.wait", since: traceStart) }
        if let index = queued.firstIndex(where: { $0 === build }) { compile(queued.remove(at: index)) }
        while true {
            if case .done(let result) = build.state { return result }
            condition.wait()
        }
    }

    /// For a kernel going away: a queued build is dropped, a running one waited for; returns
    /// the pipeline to destroy, if one was made.
    func abandon(_ build: PipelineBuild) -> VkPipeline? {
        condition.lock()
        defer { condition.unlock() }
        if let index = queued.firstIndex(where: { $0 === build }) {
            queued.remove(at: index)
            unfinished -= 1
            condition.broadcast()
            return nil
        }
        while true {
            if case .done(let result) = build.state { return try? result.get() }
            condition.wait()
        }
    }

    /// Waits until every pipeline queued so far is compiled, helping with those still
    /// queued; throws the first failure since the context opened.
    func finishCompiling() throws {
        condition.lock()
        defer { condition.unlock() }
        while !queued.isEmpty { compile(queued.removeFirst()) }
        while unfinished > 0 { condition.wait() }
        if let firstFailure { throw firstFailure }
    }

    /// Pipelines the worker threads compiled (the rest: waiting threads, or kernels' inits).
    var workerCompiles: Int { condition.withLock { compiledByWorkers } }

    /// Kernels named here fail as if the driver had refused them (tests of how a failure
    /// is reported).
    func injectFailure(kernel name: String) {
        condition.withLock { _ = failingKernels.insert(name) }
    }

    func injectedFailure(kernel name: String) -> Bool {
        condition.withLock { failingKernels.contains(name) }
    }

    private func work() {
        condition.lock()
        defer { condition.unlock() }
        while !queued.isEmpty {
            compile(queued.removeFirst())
            compiledByWorkers += 1
        }
        workers -= 1
    }

    /// Runs a build taken off the queue, outside the lock (held on entry and on return).
    private func compile(_ build: PipelineBuild) {
        build.state = .running
        condition.unlock()
        let result = Result { try build.compile() }
        condition.lock()
        build.state = .done(result)
        if case .failure(let error) = result, firstFailure == nil { firstFailure = error }
        unfinished -= 1
        condition.broadcast()
    }
}

/// One pipeline being made. Its state is guarded by the compiler's lock.
final class PipelineBuild: @unchecked Sendable {
    enum State {
        case queued, running
        case done(Result<VkPipeline, Error>)
    }

    fileprivate let compile: () throws -> VkPipeline
    fileprivate var state = State.queued

    fileprivate init(_ compile: @escaping () throws -> VkPipeline) {
        self.compile = compile
    }
}
