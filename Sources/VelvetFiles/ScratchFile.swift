import Foundation

/// A file in the temporary directory that lives only while the command needs it: deleted
/// when this is released, and by the signal path if the process is interrupted first. It
/// lies in a folder of its own (`mkdtemp`: a name no one can guess, open to this user
/// alone), so nothing planted in a shared temporary directory (a link to another file) is
/// ever written through.
/// The folder is locked (`flock`) while its process lives, so the folders of a killed one
/// (SIGKILL, which nothing can catch) are found unlocked and deleted by the next scratch file.
public final class ScratchFile: @unchecked Sendable {
    public let path: String
    private let folder: String
    private let lock: Int32

    private static let prefix = "velvet-"

    /// The temporary folder: `TMPDIR` as Foundation reads it, but an empty `TMPDIR` taken as
    /// unset (Foundation would make it the root folder).
    public static var temporaryFolder: String {
        ProcessInfo.processInfo.environment["TMPDIR"] == "" ? "/tmp" : NSTemporaryDirectory()
    }

    /// `$TMPDIR/velvet-XXXXXX/NAME`.
    public init(_ name: String) throws {
        let temporary = URL(fileURLWithPath: Self.temporaryFolder)
        Self.deleteAbandoned(in: temporary)
        var template = Array(temporary.appendingPathComponent(Self.prefix + "XXXXXX").path.utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw OutputFileError.cannotWrite(path: Self.temporaryFolder, reason: String(cString: strerror(errno)))
        }
        folder = String(cString: made)
        path = folder + "/" + name
        lock = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if lock >= 0 { flock(lock, LOCK_EX) }
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
        if lock >= 0 { close(lock) }
    }

    /// Deletes this user's scratch folders that no live process holds locked, and their files.
    private static func deleteAbandoned(in temporary: URL) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        for name in names where name.hasPrefix(prefix) && name.count == prefix.count + 6 {
            let folder = temporary.appendingPathComponent(name).path
            let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            var info = stat()
            // A folder made in the last minute may be one whose process has not locked it yet.
            guard fstat(descriptor, &info) == 0, info.st_uid == getuid(), time(nil) - info.st_mtim.tv_sec > 60,
                  flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { continue }
            // Its own files only, relative to the folder opened (a link is removed, never followed).
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] { unlinkat(descriptor, entry, 0) }
            rmdir(folder)
        }
    }
}
