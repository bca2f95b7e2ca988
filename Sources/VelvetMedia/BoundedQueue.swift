import Foundation
import VelvetGPU

/// A blocking FIFO with a capacity, linking the pipeline's threads. `close()` wakes every
/// waiter: pushes are then dropped and pops return nil once the queue is empty.
final class BoundedQueue<Element>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element] = []
    private var closed = false
    let capacity: Int
    /// The queue's name in a trace: a blocked push or pop is a span "queue.NAME.push" / ".pop".
    private let name: String

    init(capacity: Int, name: String = "queue") {
        self.capacity = capacity
        self.name = name
    }

    /// Blocks while full. Returns false if the queue was closed.
    @discardableResult
    func push(_ item: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if items.count >= capacity && !closed {
            Trace.span("queue.\(name).push") { while items.count >= capacity && !closed { condition.wait() } }
        }
        guard !closed else { return false }
        items.append(item)
        condition.broadcast()
        return true
    }

    /// Blocks while empty; nil once closed and drained.
    func pop() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        if items.isEmpty && !closed {
            Trace.span("queue.\(name).pop") { while items.isEmpty && !closed { condition.wait() } }
        }
        guard !items.isEmpty else { return nil }
        let item = items.removeFirst()
        condition.broadcast()
        return item
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}

/// Set once from any thread (SIGINT, a failing stage); read by every stage.
public final class CancellationFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var cancelled = false
    public init() {}
    public var isCancelled: Bool { lock.withLock { cancelled } }
    public func cancel() { lock.withLock { cancelled = true } }
}
