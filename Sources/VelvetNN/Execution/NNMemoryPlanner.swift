/// Places tensors in one arena so that tensors alive at the same time never overlap
/// and memory is reused once a tensor's last reader has run (first fit by offset,
/// tensors placed in the order they are produced).
enum NNMemoryPlanner {
    struct Request {
        var id: Int
        /// Size in vec4s.
        var size: Int
        /// Index of the step that writes it, and of the last step that reads it.
        var firstStep: Int
        var lastStep: Int
    }

    /// Placement granularity in vec4s (256 bytes), so tensors start on cache lines.
    static let alignment = 16

    /// Offsets (in vec4s) by request id, and the arena size in vec4s.
    static func place(_ requests: [Request]) -> (offsets: [Int: Int], size: Int) {
        var placed: [(request: Request, offset: Int)] = []
        var offsets: [Int: Int] = [:]
        var size = 0
        let order = requests.sorted { ($0.firstStep, -$0.size, $0.id) < ($1.firstStep, -$1.size, $1.id) }
        for request in order {
            let alignedSize = (request.size + alignment - 1) / alignment * alignment
            let busy = placed
                .filter { $0.request.firstStep <= request.lastStep && request.firstStep <= $0.request.lastStep }
                .map { (start: $0.offset, end: $0.offset + ($0.request.size + alignment - 1) / alignment * alignment) }
                .sorted { $0.start < $1.start }
            var offset = 0
            for range in busy {
                if offset + alignedSize <= range.start { break }
                offset = max(offset, range.end)
            }
            placed.append((request, offset))
            offsets[request.id] = offset
            size = max(size, offset + alignedSize)
        }
        return (offsets, size)
    }
}
