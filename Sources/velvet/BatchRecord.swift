import Foundation
import VelvetFiles
import VelvetMedia

/// The proof that a `batch` output is finished: `.NAME.velvet-done` beside `NAME`, JSON
/// naming the input (resolved path, size, modification time, a hash of its first and last
/// MiB), a hash of the effective settings (preset and flags, encoder settings) and the output
/// itself (size, modification time). It is written in the same locked step that moves the
/// output into place, so a signal cannot separate the two; a record whose output is missing
/// or different proves nothing. An output counts as finished only when its record matches
/// the input, the settings and the output as they are now.
struct BatchRecord: Codable, Equatable {
    struct Stamp: Codable, Equatable {
        var size: Int64
        var modifiedNanoseconds: Int64

        init?(_ path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            self.init(info)
        }

        /// A regular file that is no link (a record is only read where the batch wrote one).
        init?(regularFileAt path: String) {
            var info = stat()
            guard lstat(path, &info) == 0 else { return nil }
            self.init(info)
        }

        private init?(_ info: stat) {
            guard (info.st_mode & S_IFMT) == S_IFREG else { return nil }
            size = Int64(info.st_size)
            modifiedNanoseconds = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        }
    }

    var input: String
    var inputStamp: Stamp
    var inputSample: String
    var settings: String
    var output: Stamp

    /// What an output's state is, judged from its record.
    enum Verdict {
        /// Made from this input with these settings, and unchanged since.
        case finished
        /// Made by a batch and unchanged since, but from another input or with other settings.
        case outdated
        /// No record, or the file changed after it was written: nothing proves who made it.
        case unproven
    }

    static func path(for output: String) -> String {
        let url = URL(fileURLWithPath: output)
        return url.deletingLastPathComponent().appendingPathComponent(SiblingName.hidden(url.lastPathComponent, suffix: ".velvet-done")).path
    }

    static func verdict(output: String, input: String, settings: [String]) -> Verdict {
        guard Stamp(regularFileAt: path(for: output)) != nil, let data = FileManager.default.contents(atPath: path(for: output)),
              let record = try? JSONDecoder().decode(BatchRecord.self, from: data),
              let stamp = Stamp(output), record.output == stamp else { return .unproven }
        guard let source = try? Source(input) else { return .outdated }
        return settings.contains { BatchRecord(source: source, settings: $0, output: stamp) == record } ? .finished : .outdated
    }

    /// The settings a record holds for an output kept from a damaged input (`--allow-truncated`):
    /// only a run that allows it again takes that output as finished.
    static func damaged(_ settings: String) -> String { settings + " damaged" }

    /// An input as it is now: its resolved path, stamp and sample. A render takes it before it
    /// reads the input, so its record describes what was read: an input replaced or still
    /// growing while it was rendered no longer matches, and the next run renders it again.
    struct Source: Equatable {
        var path: String
        var stamp: Stamp
        var sample: String

        /// Why `path` has no stamp: it is missing, or not a regular file (a batch's record
        /// needs one it can stamp and read again).
        private static func notAFile(_ path: String) -> String {
            var info = stat()
            guard stat(path, &info) == 0 else { return String(cString: strerror(errno)).lowercased() }
            return (info.st_mode & S_IFMT) == S_IFDIR ? "is a directory" : "not a regular file (a FIFO, device or socket): batch renders files"
        }

        init(_ input: String) throws {
            guard let stamp = Stamp(input) else { throw MediaError.cannotOpen(path: input, reason: Self.notAFile(input)) }
            path = SameFile.resolved(input)
            self.stamp = stamp
            sample = try BatchRecord.sample(input, size: stamp.size)
        }
    }

    /// The record of `source` rendered with `settings` into a file stamped `output`.
    init(source: Source, settings: String, output: Stamp) {
        input = source.path
        inputStamp = source.stamp
        inputSample = source.sample
        self.settings = settings
        self.output = output
    }

    func write(for output: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // The record is the batch's own file: a link or FIFO at its name is replaced, not followed.
        try OutputFile.write(try encoder.encode(self), to: Self.path(for: output), ownsEntry: true)
    }

    /// A hash of the first and last MiB: cheap on large videos, and it changes when a file
    /// is replaced by another of the same size and time.
    fileprivate static func sample(_ path: String, size: Int64) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw MediaError.cannotOpen(path: path, reason: "cannot read") }
        defer { try? handle.close() }
        let mebibyte = 1 << 20
        var hash = FNV1a()
        hash.update(try handle.read(upToCount: mebibyte) ?? Data())
        if size > Int64(mebibyte) {
            try handle.seek(toOffset: UInt64(max(size - Int64(mebibyte), Int64(mebibyte))))
            hash.update(try handle.read(upToCount: mebibyte) ?? Data())
        }
        return hash.hex
    }
}
