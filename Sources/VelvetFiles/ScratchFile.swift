import Foundation

/// A file in the temporary directory that lives only while the command needs it: deleted
/// when this is released, and by the signal path if the process is interrupted first. It
/// lies in a folder of its own (`mkdtemp`: a name no one can guess, open to this user
/// alone), so nothing planted in a shared temporary directory (a link to another file) is
/// ever written through.
public final class ScratchFile: @unchecked Sendable {
    public let path: String
    private let folder: String

    /// `$TMPDIR/velvet-XXXXXX/NAME`.
    public init(_ name: String) throws {
        var template = Array(URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("velvet-XXXXXX").path.utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw OutputFileError.cannotWrite(path: NSTemporaryDirectory(), reason: String(cString: strerror(errno)))
        }
        folder = String(cString: made)
        path = folder + "/" + name
        UnfinishedFiles.shared.adding(folder) {}
        UnfinishedFiles.shared.adding(path) {}
    }

    deinit {
        UnfinishedFiles.shared.exclusively {
            unlink(path)
            rmdir(folder)
            UnfinishedFiles.shared.remove(path)
            UnfinishedFiles.shared.remove(folder)
        }
    }
}
