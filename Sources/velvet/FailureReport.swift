import Foundation

/// How a failed command tells the user: one line on stderr and, when `--json` was asked
/// for, the same as one JSON object on stdout (`{"error": ..., "exit_code": N}`), so a
/// script reading stdout learns of the failure too.
final class FailureReport: @unchecked Sendable {
    static let shared = FailureReport()
    private let lock = NSLock()
    private var json = false

    /// Set once the command line says `--json`.
    func alsoAsJSON(_ enabled: Bool) { lock.withLock { json = enabled } }

    func print(line: String, message: String, exitCode: Int32) {
        lock.withLock {
            FileHandle.standardError.write(Data((line + "\n").utf8))
            guard json else { return }
            let object: [String: Any] = ["error": message, "exit_code": Int(exitCode)]
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) {
                StandardOutput.writeIgnoringFailure(String(decoding: data, as: UTF8.self) + "\n")
            }
        }
    }
}
