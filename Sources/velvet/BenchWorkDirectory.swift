import Foundation
import VelvetFiles

/// Where `bench media` and `bench soak` keep their clips and write their outputs: `--work-dir`,
/// else a folder of this user's own in the temporary directory. Their file names are fixed, so
/// in a folder others can write (/tmp) a link planted at one would have had a render written
/// through it into any file of the user's.
enum BenchWorkDirectory {
    static func resolve(_ given: String?) throws -> String {
        if let given { return given }
        let path = URL(fileURLWithPath: ScratchFile.temporaryFolder, isDirectory: true).appendingPathComponent("velvet-bench-\(getuid())").path
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw OutputFileError.cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == getuid(), info.st_mode & 0o022 == 0 else {
            throw OutputFileError.cannotWrite(path: path, reason: "it is not a private folder of this user's (a link, another user's, "
                                              + "or writable by others): remove it, or give --work-dir")
        }
        return path
    }
}
