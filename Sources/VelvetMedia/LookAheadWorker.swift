import Foundation
import VelvetGPU

/// Runs an effect's look-ahead on a thread of its own, one job per frame in order, so that
/// the tracker's submit-and-wait round trips overlap the GPU thread's recording of the frames
/// K before (issue 16, item 5). A failed job fails every later wait; `close` waits for the
/// job under way, so nothing runs on the GPU after the render returns.
final class LookAheadWorker: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [() throws -> Void] = []
    private var done = 0
    private var failure: Error?
    private var closed = false
    private var running = true
    private var busy = (wall: 0.0, cpu: 0.0)

    init() {
        let thread = Thread { [self] in
            Trace.nameThread("v-lookahead")
            // The tracker's recordings go to the look-ahead's queue, beside the frames' stages.
            GPULane.lookAhead.useOnThisThread()
            run()
        }
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Queues a job behind the ones before it.
    func submit(_ job: @escaping () throws -> Void) {
        condition.withLock {
            jobs.append(job)
            condition.broadcast()
        }
    }

    /// Blocks until `count` jobs have run; throws the first job's error.
    func wait(untilDone count: Int) throws {
        try condition.withLock {
            while done < count, failure == nil { condition.wait() }
            if let failure { throw failure }
        }
    }

    /// Seconds the thread spent in jobs, and the CPU seconds it used in them (less by its
    /// sleeping waits).
    var busySeconds: (wall: Double, cpu: Double) { condition.withLock { busy } }

    /// Drops the jobs not started and waits for the one under way.
    func close() {
        condition.withLock {
            closed = true
            jobs.removeAll()
            condition.broadcast()
            while running { condition.wait() }
        }
    }

    private func run() {
        while true {
            let job = condition.withLock { () -> (() throws -> Void)? in
                while jobs.isEmpty, !closed { condition.wait() }
                return jobs.isEmpty ? nil : jobs.removeFirst()
            }
            guard let job else { break }
            let start = DispatchTime.now().uptimeNanoseconds
            let cpuStart = CPUTime.thread()
            var error: Error?
            if condition.withLock({ failure == nil }) {
                do { try job() } catch let caught { error = caught }
            }
            let spent = (wall: Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, cpu: CPUTime.thread() - cpuStart)
            condition.withLock {
                if let error, failure == nil { failure = error }
                done += 1
                busy = (busy.wall + spent.wall, busy.cpu + spent.cpu)
                condition.broadcast()
            }
        }
        condition.withLock {
            running = false
            condition.broadcast()
        }
    }
}
