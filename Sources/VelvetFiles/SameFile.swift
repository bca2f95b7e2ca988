import Foundation

/// Whether two paths name one file: the same device and inode when both exist, else the same
/// path once `.`, `..` and symbolic links in its directory are resolved.
public enum SameFile {
    public static func check(_ lhs: String, _ rhs: String) -> Bool {
        !Set(keys(lhs)).isDisjoint(with: keys(rhs))
    }

    /// What identifies the file at `path`: its device and inode when it exists, and its
    /// resolved path. Two paths share a key exactly when `check` says they are one file, so
    /// many paths can be compared through a set.
    public static func keys(_ path: String) -> [String] {
        var info = stat()
        var keys = [pathKey(resolved(path))]
        // A link to a file not there yet names the file an output through it creates (`OutputTarget`).
        if case .file(let target)? = try? OutputTarget.of(path), target != path { keys.append(pathKey(resolved(target))) }
        guard stat(path, &info) == 0 else { return keys }
        return ["inode:\(info.st_dev):\(info.st_ino)"] + keys
    }

    /// A path as a key compared byte for byte: Swift compares strings by canonical
    /// equivalence, so "café" composed and decomposed would be one key, while Linux holds
    /// them as two files.
    private static func pathKey(_ path: String) -> String {
        "path:" + path.utf8.map { String($0, radix: 16) }.joined(separator: ".")
    }

    /// What identifies the file open as `descriptor` (standard input or output): its device
    /// and inode, when it is a regular file; none for a terminal. A pipe or socket has keys
    /// only with `streams`: a path names one only through /dev/stdout or /proc/self/fd/N,
    /// which is the same stream (two commands' streams are never one).
    public static func keys(descriptor: Int32, streams: Bool = false) -> [String] {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return [] }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG || (streams && (type == S_IFIFO || type == S_IFSOCK)) else { return [] }
        return ["inode:\(info.st_dev):\(info.st_ino)"]
    }

    /// The absolute path with its directory's symbolic links resolved (the file itself may not exist yet).
    public static func resolved(_ path: String) -> String {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let directory = url.deletingLastPathComponent().path
        guard let real = realpath(directory, nil) else { return url.path }
        defer { free(real) }
        return URL(fileURLWithPath: String(cString: real)).appendingPathComponent(url.lastPathComponent).path
    }
}
