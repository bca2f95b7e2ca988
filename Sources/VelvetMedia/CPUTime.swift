import Foundation

/// CPU seconds used so far, by the calling thread or by the whole process (user and system).
enum CPUTime {
    static func thread() -> Double { seconds(CLOCK_THREAD_CPUTIME_ID) }
    static func process() -> Double { seconds(CLOCK_PROCESS_CPUTIME_ID) }

    private static func seconds(_ clock: clockid_t) -> Double {
        var now = timespec()
        guard clock_gettime(clock, &now) == 0 else { return 0 }
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
