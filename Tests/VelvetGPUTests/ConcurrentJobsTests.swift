import Foundation
import VelvetGPU
import XCTest

/// `ConcurrentJobs`: every job runs, at once where the cores allow, the results come back in
/// the jobs' order, and an error is the first failing job's, thrown after all have ended.
final class ConcurrentJobsTests: XCTestCase {
    private struct Failure: Error, Equatable { let job: Int }

    private final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var running = 0
        private(set) var mostAtOnce = 0
        private(set) var ended = 0
        func start() { lock.withLock { running += 1; mostAtOnce = max(mostAtOnce, running) } }
        func end() { lock.withLock { running -= 1; ended += 1 } }
        var snapshot: (mostAtOnce: Int, ended: Int) { lock.withLock { (mostAtOnce, ended) } }
    }

    func testResultsComeBackInOrderAndTheJobsOverlap() throws {
        let log = Log()
        // Later jobs end first; each waits long enough that another starts meanwhile.
        let jobs: [@Sendable () throws -> Int] = (0..<4).map { index in
            { log.start(); usleep(UInt32(40_000 - index * 8_000)); log.end(); return index * 10 }
        }
        XCTAssertEqual(try ConcurrentJobs.run(jobs), [0, 10, 20, 30])
        XCTAssertEqual(log.snapshot.ended, 4)
        if ProcessInfo.processInfo.activeProcessorCount > 1 {
            XCTAssertGreaterThan(log.snapshot.mostAtOnce, 1, "the jobs ran one after another")
        }
    }

    func testTheFirstFailingJobsErrorIsThrownAfterEveryJobEnded() {
        let log = Log()
        let jobs: [@Sendable () throws -> Int] = (0..<4).map { index in
            {
                log.start()
                defer { log.end() }
                usleep(UInt32(20_000 - index * 4_000))
                if index == 1 || index == 3 { throw Failure(job: index) }
                return index
            }
        }
        XCTAssertThrowsError(try ConcurrentJobs.run(jobs)) { XCTAssertEqual($0 as? Failure, Failure(job: 1)) }
        XCTAssertEqual(log.snapshot.ended, 4, "every job ended before the error came back")
    }

    func testOneJobRunsOnTheCallingThread() throws {
        let caller = ObjectIdentifier(Thread.current)
        let ranOn = try ConcurrentJobs.run([{ @Sendable in ObjectIdentifier(Thread.current) }])
        XCTAssertEqual(ranOn, [caller])
    }
}
