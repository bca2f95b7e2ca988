import Foundation

/// A file in the temporary directory that lives only while the command needs it: deleted
/// when this is released, and by the signal path if the process is interrupted first.
public final class ScratchFile: @unchecked Sendable {
    public let path: String

    /// `$TMPDIR/NAME` (NAME should hold something unique, such as the PID or a UUID).
    public init(_ name: String) {
        path = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(name).path
        UnfinishedFiles.shared.adding(path) {}
    }

    deinit {
        UnfinishedFiles.shared.exclusively {
            unlink(path)
            UnfinishedFiles.shared.remove(path)
        }
    }
}
