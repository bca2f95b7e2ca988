import Foundation
import VelvetFiles

/// A timeline of what each thread of a render did, for finding where it waits: with
/// `VELVET_TRACE=FILE` every span (decoding a frame, recording it, submitting, waiting on a
/// fence, encoding, a queue that blocked) is kept with its thread and written to FILE in the
/// Trace Event format that chrome://tracing and Perfetto open, when a render ends
/// (`Tools/trace-summary.py` sums it per thread). Without the variable `span` is one branch.
public final class Trace: @unchecked Sendable {
    /// The process's trace: set when `VELVET_TRACE` names a file.
    public static let shared: Trace? = ProcessInfo.processInfo.environment["VELVET_TRACE"]
        .flatMap { $0.isEmpty ? nil : Trace(path: $0) }

    /// Spans kept at most (about 40 MB); later ones are counted, not kept.
    static let capacity = 1 << 20

    private struct Span {
        let name: String
        let thread: Int32
        let start: UInt64
        let end: UInt64
    }

    public let path: String
    private let lock = NSLock()
    private var spans: [Span] = []
    private var dropped = 0
    private var threadNames: [Int32: String] = [:]
    private let origin = DispatchTime.now().uptimeNanoseconds

    init(path: String) {
        self.path = path
    }

    /// Runs `work`, recording it as a span called `name` on the calling thread when tracing.
    @inline(__always)
    public static func span<T>(_ name: @autoclosure () -> String, _ work: () throws -> T) rethrows -> T {
        guard let trace = shared else { return try work() }
        let start = DispatchTime.now().uptimeNanoseconds
        defer { trace.record(name(), start: start, end: DispatchTime.now().uptimeNanoseconds) }
        return try work()
    }

    /// Names the calling thread in the trace and, with `system`, for `top -H` and `ps -L` (at
    /// most 15 characters there; not for a thread that may be the main one, whose name is the
    /// process's).
    public static func nameThread(_ name: String, system: Bool = true) {
        if system { Thread.current.name = String(name.prefix(15)) }
        guard let trace = shared else { return }
        trace.lock.withLock { trace.threadNames[trace.threadNumber()] = name }
    }

    /// Records a span called `name` on the calling thread from `start` (a
    /// `DispatchTime.now().uptimeNanoseconds`) to now: for a span whose work is not one closure.
    public func record(_ name: String, since start: UInt64) {
        record(name, start: start, end: DispatchTime.now().uptimeNanoseconds)
    }

    func record(_ name: String, start: UInt64, end: UInt64) {
        lock.withLock { append(Span(name: name, thread: threadNumber(), start: start, end: end)) }
    }

    /// Records a timed section as the GPU ran it (from its timestamps, on the trace's
    /// clock), on a row of its own called "gpu".
    func recordGPU(_ name: String, start: UInt64, end: UInt64) {
        lock.withLock {
            threadNames[Self.gpuRow] = "gpu"
            append(Span(name: name, thread: Self.gpuRow, start: start, end: end))
        }
    }

    private static let gpuRow: Int32 = 0

    private func append(_ span: Span) {
        guard spans.count < Self.capacity else { dropped += 1; return }
        spans.append(span)
    }

    /// The calling thread's number in the trace, from 1 in the order threads first record
    /// (under the lock), kept in the thread's own dictionary: a thread id can be reused once
    /// its thread has ended.
    private var threadCount: Int32 = 0
    private func threadNumber() -> Int32 {
        let key = "velvet.trace.thread"
        let dictionary = Thread.current.threadDictionary
        if let number = dictionary[key] as? Int32 { return number }
        threadCount += 1
        dictionary[key] = threadCount
        return threadCount
    }

    /// The spans so far as Trace Event JSON: complete events ("X", microseconds from the
    /// trace's start) and the threads' names.
    func json() -> Data {
        let (spans, names, dropped) = lock.withLock { (self.spans, threadNames, self.dropped) }
        var events: [[String: Any]] = names.sorted { $0.key < $1.key }.map { thread, name in
            ["name": "thread_name", "ph": "M", "pid": 1, "tid": Int(thread), "args": ["name": name]]
        }
        events += spans.map { span in
            ["name": span.name, "ph": "X", "pid": 1, "tid": Int(span.thread),
             "ts": Double(Int64(bitPattern: span.start &- origin)) / 1000, "dur": Double(span.end &- span.start) / 1000]
        }
        let document: [String: Any] = ["traceEvents": events, "displayTimeUnit": "ms", "otherData": ["dropped_spans": dropped]]
        return (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])) ?? Data()
    }

    /// Writes every span so far to the file, as `write()`; a failure is one warning line on
    /// stderr, once (a trace never fails the render it describes). Each render calls it as it ends.
    public func save() {
        do {
            try write()
        } catch {
            let first = lock.withLock { () -> Bool in
                defer { warned = true }
                return !warned
            }
            if first { FileHandle.standardError.write(Data("velvet: warning: \(error)\n".utf8)) }
        }
    }

    private var warned = false
    /// Why the trace must not be written (it names a file the command reads or writes).
    private var refusal: String?

    /// Keeps the trace from being written, saying `reason` once when it would have been:
    /// `VELVET_TRACE` named the command's input or output, which it would replace.
    public func refuse(_ reason: String) { lock.withLock { refusal = reason } }

    /// Writes every span so far to the file (through `OutputFile`: a temporary file and a
    /// rename, so a reader never sees half of it; a FIFO or a link is written through).
    public func write() throws {
        if let refusal = lock.withLock({ refusal }) {
            throw GPUError.invalidArgument("VELVET_TRACE: \(refusal): no trace written")
        }
        do {
            try OutputFile.write(json(), to: path)
        } catch {
            throw GPUError.invalidArgument("VELVET_TRACE: \(error)")
        }
    }
}
