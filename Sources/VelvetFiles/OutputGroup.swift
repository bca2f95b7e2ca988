import Foundation

/// Outputs that land together: each is finished under its temporary name and handed over
/// (`CommitPolicy.handOver`, `OutputFile.prepared`), then all are moved into place at once,
/// with no signal sweep in between. One that fails before the commit leaves none of them.
public final class OutputGroup: @unchecked Sendable {
    private let lock = NSLock()
    private var files: [OutputFile] = []

    public init() {}

    public func add(_ file: OutputFile) {
        lock.withLock { files.append(file) }
    }

    /// `policy` with its finished file handed to this group instead of committed.
    public func holding(_ policy: CommitPolicy) -> CommitPolicy {
        var held = policy
        held.handOver = { [weak self] in self?.add($0) } // the file keeps its policy: no cycle through it
        return held
    }

    /// Deletes the temporary files of those not committed (a failed or abandoned command).
    public func discard() {
        for file in lock.withLock({ files }) { file.discard() }
    }

    public func commit() throws {
        let files = lock.withLock { self.files }
        try UnfinishedFiles.shared.exclusively {
            for file in files { try file.commit() }
        }
    }
}
