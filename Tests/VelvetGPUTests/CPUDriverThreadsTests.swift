import Foundation
@testable import VelvetGPU
import VelvetTestSupport
import XCTest

/// lavapipe's worker count: two per usable core unless the user chose, and llvmpipe started
/// that many.
final class CPUDriverThreadsTests: GPUTestCase {
    func testTwoWorkersPerCoreUnlessSetOrOneCore() {
        XCTAssertEqual(CPUDriverThreads.value(environment: [:], cores: 2), "4")
        XCTAssertEqual(CPUDriverThreads.value(environment: ["PATH": "/bin"], cores: 16), "32")
        XCTAssertNil(CPUDriverThreads.value(environment: ["LP_NUM_THREADS": "3"], cores: 8))
        XCTAssertNil(CPUDriverThreads.value(environment: ["LP_NUM_THREADS": ""], cores: 8))
        XCTAssertNil(CPUDriverThreads.value(environment: [:], cores: 1))
        XCTAssertEqual(CPUDriverThreads.allowedCores(status: "Name:\tvelvet\nCpus_allowed:\tff\nCpus_allowed_list:\t0-7\n"), 8)
        XCTAssertEqual(CPUDriverThreads.allowedCores(status: "Cpus_allowed:\t00000000,00000003,80000000\n"), 3)
        XCTAssertNil(CPUDriverThreads.allowedCores(status: "Cpus_allowed:\t0\n"))
        XCTAssertNil(CPUDriverThreads.allowedCores(status: "Name:\tvelvet\n"))
        XCTAssertGreaterThanOrEqual(CPUDriverThreads.usableCores, 1)
        XCTAssertLessThanOrEqual(CPUDriverThreads.usableCores, ProcessInfo.processInfo.processorCount)
    }

    /// llvmpipe names its rasteriser threads `llvmpipe-N`, as many as its compute workers, per
    /// open device; the variable is set before the first instance, so they come in its count.
    func testLlvmpipeStartsTheWorkersSet() throws {
        let context = try context
        guard context.device.kind == .cpu, context.device.driver.lowercased().contains("llvmpipe") else {
            throw XCTSkip("not lavapipe: \(context.device.name)")
        }
        guard CPUDriverThreads.usableCores > 1 || getenv(CPUDriverThreads.variable) != nil else {
            // One core: the driver's default is kept (dispatches run on the queue's thread).
            XCTAssertNil(CPUDriverThreads.chosen)
            return
        }
        let value = try XCTUnwrap(getenv(CPUDriverThreads.variable).map { String(cString: $0) })
        let workers = try XCTUnwrap(Int(value))
        if let chosen = CPUDriverThreads.chosen {
            XCTAssertEqual(chosen, value)
            XCTAssertEqual(workers, CPUDriverThreads.workersPerCore * CPUDriverThreads.usableCores)
        }
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")
        let named = tasks.filter { task in
            ((try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? "").hasPrefix("llvmpipe-")
        }.count
        // llvmpipe caps its workers (at 32 in Mesa 22.3: `LP_NUM_THREADS=40` starts 32);
        // each open device has its own.
        let started = min(workers, 32)
        XCTAssertTrue(named >= started && named % started == 0, "\(named) llvmpipe threads, \(workers) asked")
    }
}
