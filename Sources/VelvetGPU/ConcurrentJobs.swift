import Foundation

/// Independent jobs run at once, as many as the cores take (loading several models: each
/// one's parsing and planning is CPU work of its own). The results come back in the jobs'
/// order; the first job's error (in that order) is thrown once every job has ended.
public enum ConcurrentJobs {
    public static func run<T>(_ jobs: [@Sendable () throws -> T]) throws -> [T] {
        if jobs.count <= 1 { return try jobs.map { try $0() } }
        let results = Results<T>(count: jobs.count)
        DispatchQueue.concurrentPerform(iterations: jobs.count) { index in
            results.set(index, Result { try jobs[index]() })
        }
        return try results.values.map { try $0!.get() }
    }

    private final class Results<T>: @unchecked Sendable {
        private let lock = NSLock()
        private var slots: [Result<T, Error>?]
        init(count: Int) { slots = Array(repeating: nil, count: count) }
        func set(_ index: Int, _ result: Result<T, Error>) { lock.withLock { slots[index] = result } }
        var values: [Result<T, Error>?] { lock.withLock { slots } }
    }
}
