import Foundation

/// How an output is moved into place.
public struct CommitPolicy: Sendable {
    /// Replace a file already at the path (`-y`); otherwise the commit fails if one appeared.
    public var replacesExisting: Bool
    /// Runs first, before the commit lock is taken: work that may wait on other threads (GPU
    /// work, whose kernels may still be compiling and writing the pipeline cache, which takes
    /// the lock) goes here, never into `beforeRename`.
    public var prepare: (@Sendable () throws -> Void)?
    /// Runs under the commit lock just before the rename, with the finished temporary file:
    /// what it writes (a record of the output) cannot be split from the output by a signal.
    public var beforeRename: (@Sendable (_ finishedFile: String) throws -> Void)?
    /// Takes the finished file instead of it being moved into place, to be committed with other
    /// outputs once all are finished (`analyze`'s drawings and track file). A stream or an image
    /// sequence, which no single rename puts in place, commits as usual.
    public var handOver: (@Sendable (_ finished: OutputFile) -> Void)?

    public init(replacesExisting: Bool, prepare: (@Sendable () throws -> Void)? = nil,
                beforeRename: (@Sendable (String) throws -> Void)? = nil, handOver: (@Sendable (OutputFile) -> Void)? = nil) {
        self.replacesExisting = replacesExisting
        self.prepare = prepare
        self.beforeRename = beforeRename
        self.handOver = handOver
    }

    public static let replace = CommitPolicy(replacesExisting: true)
    public static let noClobber = CommitPolicy(replacesExisting: false)
}

/// An output written under a temporary name beside its path (`PartialFiles`) and renamed into
/// place only when complete, so the path never holds a half-written file. The temporary file
/// is registered with `UnfinishedFiles` from before it exists until it is committed or
/// deleted, so an interrupted process removes it. Every file Velvet writes goes through here.
/// A link is followed to the file it names; a device or FIFO is written in place
/// (`OutputTarget`).
public final class OutputFile: @unchecked Sendable {
    /// The path as the user gave it (for messages).
    public let path: String
    /// What is opened and written: the temporary file, or the device or FIFO itself.
    public let temporaryPath: String
    private let target: OutputTarget
    private let policy: CommitPolicy
    private var done = false
    /// The temporary file, opened by `PartialFiles.claim` and locked while this process writes it.
    private var claim: Int32 = -1
    private let checksOtherWriters: Bool
    /// A stream output, once created, until committed or discarded (`UnfinishedFiles.streaming`).
    private var sending = false

    /// Checks that the output's directory exists and is writable.
    /// - Parameter ownsEntry: the path is Velvet's own (a batch record): whatever is there, a
    ///   link or a FIFO included, is replaced as an entry, never followed or written into.
    /// - Parameter isSequenceFrame: a frame of an image sequence: its claim does not look for
    ///   other writers of the same file (`PartialFiles.claim`'s `othersOf`), which the
    ///   sequence's own check made for all its frames at once.
    public init(path: String, policy: CommitPolicy = .replace, ownsEntry: Bool = false, isSequenceFrame: Bool = false) throws {
        target = ownsEntry ? .file(path: path) : try OutputTarget.of(path)
        self.path = path
        self.policy = policy
        checksOtherWriters = !isSequenceFrame
        switch target {
        case .file(let file):
            try Self.checkDirectory(of: file, named: path)
            // A file the user may not write is not replaced by renaming over it (ffmpeg's open fails too).
            if access(file, F_OK) == 0, access(file, W_OK) != 0 {
                throw OutputFileError.cannotWrite(path: path, reason: String(cString: strerror(errno)))
            }
            temporaryPath = PartialFiles.path(for: file)
        case .stream(let stream):
            temporaryPath = stream
        }
    }

    /// Whether the output is written in place (a device, FIFO or socket), not renamed into it.
    public var writesInPlace: Bool {
        if case .stream = target { return true }
        return false
    }

    /// Fails unless the folder of `path`'s target exists and is writable (a device or FIFO
    /// has no folder to write in).
    public static func checkDirectory(of path: String) throws {
        if case .file(let file) = try OutputTarget.of(path) { try checkDirectory(of: file, named: path) }
    }

    private static func checkDirectory(of file: String, named path: String) throws {
        let directory = PartialFiles.directory(of: file)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else {
            throw OutputFileError.cannotWrite(path: path, reason: "directory \(directory) does not exist")
        }
        guard isDirectory.boolValue else { throw OutputFileError.cannotWrite(path: path, reason: "\(directory) is not a directory") }
        guard access(directory, W_OK) == 0 else {
            throw OutputFileError.cannotWrite(path: path, reason: "directory \(directory) is not writable")
        }
    }

    deinit { discard() }

    /// Runs `create`, which creates (opens) the temporary file, with the file registered for
    /// removal and no signal sweep in between. The first call claims the file (`PartialFiles`):
    /// it fails if another live process is writing the same temporary file.
    public func creating<T>(_ create: (_ temporaryPath: String) throws -> T) throws -> T {
        if writesInPlace {
            if !sending { UnfinishedFiles.shared.streaming(path) }
            sending = true
            return try create(temporaryPath)
        }
        return try UnfinishedFiles.shared.adding(temporaryPath) {
            if claim < 0 {
                do {
                    var file: String?
                    if checksOtherWriters, case .file(let target) = target { file = target }
                    claim = try PartialFiles.claim(temporaryPath, output: path, othersOf: file)
                    UnfinishedFiles.shared.locate(temporaryPath, by: claim)
                } catch {
                    UnfinishedFiles.shared.remove(temporaryPath) // another writer's: never swept
                    throw error
                }
            }
            return try create(temporaryPath)
        }
    }

    private func endSending() {
        if sending { UnfinishedFiles.shared.streamEnded(path) }
        sending = false
    }

    /// Lets go of the temporary file's lock (committed or deleted).
    private func release() {
        if claim >= 0 { close(claim) }
        claim = -1
    }

    /// Moves the finished temporary file to the target.
    public func commit() throws {
        guard case .file(let file) = target else {
            done = true
            endSending()
            return
        }
        try policy.prepare?()
        // The bytes reach the disk before the name does: after a crash or a power cut the
        // final path holds the whole output or what was there before, never an empty file
        // whose rename was written first.
        if claim >= 0, fsync(claim) != 0, errno != EINVAL { throw failure(errno) }
        try UnfinishedFiles.shared.exclusively {
            try policy.beforeRename?(temporaryPath)
            if policy.replacesExisting {
                guard rename(temporaryPath, file) == 0 else { throw failure(errno) }
            } else {
                try moveWithoutReplacing(to: file)
            }
            Self.syncDirectory(of: file)
            done = true
            UnfinishedFiles.shared.remove(temporaryPath)
            release()
        }
    }

    /// Deletes the temporary file (a failed or abandoned output).
    public func discard() {
        guard !done else { return }
        done = true
        guard !writesInPlace else { return endSending() }
        UnfinishedFiles.shared.exclusively {
            // Not another writer's file of the same name; found by its descriptor if its folder was renamed.
            if claim >= 0 { UnfinishedFiles.unlink(temporaryPath, following: claim) }
            UnfinishedFiles.shared.remove(temporaryPath)
            release()
        }
    }

    /// Deletes the regular file at `path` (a link's target, as a commit writes it), which an
    /// output replaced under `-y` leaves without a counterpart; a device or FIFO is left alone.
    /// Whether a file was deleted.
    public static func removeReplaced(_ path: String) -> Bool {
        guard case .file(let file)? = try? OutputTarget.of(path) else { return false }
        var info = stat()
        guard lstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        return unlink(file) == 0
    }

    /// Writes `data` to `path` through a temporary file (`ownsEntry`: see `init`).
    public static func write(_ data: Data, to path: String, policy: CommitPolicy = .replace, ownsEntry: Bool = false) throws {
        try prepared(data, to: path, policy: policy, ownsEntry: ownsEntry).commit()
    }

    /// `data` written to the temporary file of `path`, to be committed with other outputs
    /// once all are written (a full disk then leaves none of them).
    public static func prepared(_ data: Data, to path: String, policy: CommitPolicy = .replace, ownsEntry: Bool = false) throws -> OutputFile {
        try prepared(to: path, policy: policy, ownsEntry: ownsEntry) { write in try write(data) }
    }

    /// The temporary file of `path` written piece by piece: `body` gets a function that
    /// appends its bytes (a document too large to hold whole, such as a long clip's track file).
    public static func prepared(to path: String, policy: CommitPolicy = .replace, ownsEntry: Bool = false,
                                writing body: (_ write: (Data) throws -> Void) throws -> Void) throws -> OutputFile {
        let file = try OutputFile(path: path, policy: policy, ownsEntry: ownsEntry)
        let descriptor = try file.creating { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        guard descriptor >= 0 else { throw file.failure(errno) }
        defer { close(descriptor) }
        try body { data in
            guard Self.writeAll(data, to: descriptor) else { throw file.failure(errno) }
        }
        guard fsync(descriptor) == 0 || errno == EINVAL else { throw file.failure(errno) }
        return file
    }

    /// Whether all of `data` was written (retrying short writes and EINTR).
    private static func writeAll(_ data: Data, to descriptor: Int32) -> Bool {
        data.withUnsafeBytes { bytes -> Bool in
            var offset = 0
            while offset < bytes.count {
                let count = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
    }

    /// link() fails rather than replace; the temporary name is then dropped. Filesystems
    /// without hard links get renameat2(RENAME_NOREPLACE), the same guarantee.
    private func moveWithoutReplacing(to file: String) throws {
        if link(temporaryPath, file) == 0 {
            unlink(temporaryPath)
            return
        }
        let linkError = errno
        guard linkError == EPERM || linkError == EOPNOTSUPP || linkError == EMLINK, let renameAt2 = Self.renameAt2 else {
            throw linkError == EEXIST ? OutputFileError.exists(path: path) : failure(linkError)
        }
        guard renameAt2(AT_FDCWD, temporaryPath, AT_FDCWD, file, 1 /* RENAME_NOREPLACE */) == 0 else {
            throw errno == EEXIST ? OutputFileError.exists(path: path) : failure(errno)
        }
    }

    /// Writes the folder's entries (the rename) to the disk; a filesystem that cannot is left
    /// as it is (the output is in place either way).
    static func syncDirectory(of file: String) {
        let directory = open(PartialFiles.directory(of: file), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { return }
        fsync(directory)
        close(directory)
    }

    private func failure(_ code: Int32) -> OutputFileError {
        .cannotWrite(path: path, reason: String(cString: strerror(code)))
    }

    /// glibc's renameat2, looked up at run time (Swift's Glibc module leaves out the GNU extensions).
    private typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
    private static let renameAt2: RenameAt2? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "renameat2")
        .map { unsafeBitCast($0, to: RenameAt2.self) }
}
