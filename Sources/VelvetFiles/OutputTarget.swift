import Foundation

/// Where an output path really leads, as ffmpeg writes it: through a symbolic link to the file
/// it names, and into a device, FIFO or socket in place. Renaming a finished file over the
/// path, as `OutputFile` does for a regular file, would replace the link itself, or
/// `/dev/null` with a regular file.
public enum OutputTarget: Equatable, Sendable {
    /// A regular file, or none yet: written beside `path` and renamed over it.
    case file(path: String)
    /// Something that is not a regular file (`/dev/null`, a FIFO, `/proc/self/fd/1`): opened
    /// and written as it is; nothing to hold back, rename or remove.
    case stream(path: String)

    /// Symbolic links followed at most (Linux's own limit, MAXSYMLINKS).
    static let maxLinks = 40

    /// The target of `path`; fails when it is a directory or its links loop.
    public static func of(_ path: String) throws -> OutputTarget {
        var info = stat()
        // stat follows the links itself, the kernel's "magic" ones in /proc included.
        if stat(path, &info) == 0 {
            switch info.st_mode & S_IFMT {
            case S_IFREG:
                return .file(path: resolvedExisting(path) ?? path)
            case S_IFDIR:
                throw OutputFileError.cannotWrite(path: path, reason: "it is a directory")
            default:
                return .stream(path: path)
            }
        }
        // Nothing there yet, or a link to nothing: the file the last link names is created.
        return .file(path: try danglingTarget(of: path))
    }

    private static func resolvedExisting(_ path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return path }
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }

    /// Follows a chain of links that ends nowhere (or `path` itself when it is no link).
    private static func danglingTarget(of path: String) throws -> String {
        var current = path
        for _ in 0..<maxLinks {
            var info = stat()
            guard lstat(current, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return current }
            guard let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: current) else { return current }
            current = destination.hasPrefix("/") ? destination
                : URL(fileURLWithPath: current).deletingLastPathComponent().appendingPathComponent(destination).path
        }
        throw OutputFileError.cannotWrite(path: path, reason: "too many levels of symbolic links")
    }
}
