import Foundation

/// Output folders, created with their parents (`mkdir -p`); a failure is one line naming the
/// folder and the reason, not a Foundation error dump.
public enum Directory {
    public static func create(_ path: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw OutputFileError.cannotWrite(path: path, reason: "it exists and is not a directory")
            }
            return
        }
        let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
        if parent != path { try create(parent) }
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw OutputFileError.cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
    }
}
