import Foundation
import VelvetGPU

/// With VELVET_VALIDATION=1 a command ends by printing what the validation layer said
/// and fails if it said anything, so a run on any driver doubles as a validation check.
enum ValidationReport {
    struct Failure: Error, CustomStringConvertible {
        let count: Int
        var description: String { "the Vulkan validation layer reported \(count) message(s)" }
    }

    static func check(_ context: GPUContext) throws { try check([context]) }

    /// One report for several contexts (`batch`'s workers).
    static func check(_ contexts: [GPUContext]) throws {
        let logs = contexts.compactMap(\.validationLog)
        guard !logs.isEmpty else { return }
        let messages = logs.flatMap { $0.drain() }
        messages.forEach { printError("velvet: validation: \($0)") }
        printError("velvet: validation layer on, \(messages.count) message(s)")
        if !messages.isEmpty { throw Failure(count: messages.count) }
    }
}
