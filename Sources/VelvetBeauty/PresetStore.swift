import Foundation
import VelvetFiles

/// User presets on disk, beside the built-ins.
///
/// Layout, under `$XDG_CONFIG_HOME/velvet/` (`~/.config/velvet/` when unset or not absolute):
/// - `presets/NAME.json`: one user preset each (format in `PresetCoding.swift`);
/// - `default-preset`: a text file holding one preset name (built-in or user), applied when
///   rendering without `--preset`. Absent: no default.
///
/// Names are 1...64 characters of letters, digits, `-`, `_` and `.`, not starting with `.`;
/// user presets cannot take a built-in's name.
public struct PresetStore: Sendable {
    public struct Listing: Sendable, Equatable {
        public let name: String
        public let isBuiltIn: Bool
        public let isDefault: Bool
        public init(name: String, isBuiltIn: Bool, isDefault: Bool) { (self.name, self.isBuiltIn, self.isDefault) = (name, isBuiltIn, isDefault) }
    }

    /// `…/velvet` (holds `presets/` and `default-preset`).
    public let root: URL
    public var presetsDirectory: URL { root.appendingPathComponent("presets", isDirectory: true) }
    public var defaultFile: URL { root.appendingPathComponent("default-preset") }

    public init(root: URL) { self.root = root }

    /// The store the XDG base-directory rules give for `environment`.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> PresetStore {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return PresetStore(root: URL(fileURLWithPath: config).appendingPathComponent("velvet", isDirectory: true))
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return PresetStore(root: URL(fileURLWithPath: home).appendingPathComponent(".config/velvet", isDirectory: true))
    }

    public func fileURL(_ name: String) -> URL { presetsDirectory.appendingPathComponent("\(name).json") }

    /// Built-ins first (in their order), then user presets by name.
    public func list() throws -> [Listing] {
        let chosen = try? defaultName() // a broken default-preset file marks none
        let user = presetFileNames().filter { BeautyPreset.builtIn($0) == nil }
        return BeautyPreset.builtInNames.map { Listing(name: $0, isBuiltIn: true, isDefault: $0 == chosen) }
            + user.map { Listing(name: $0, isBuiltIn: false, isDefault: $0 == chosen) }
    }

    /// Preset files in `presets/` named like a built-in, which the built-in hides.
    public func hiddenByBuiltIns() -> [String] {
        presetFileNames().filter { BeautyPreset.builtIn($0) != nil }.map { fileURL($0).path }
    }

    /// The names of the regular files `presets/NAME.json` with a valid NAME (a folder or a FIFO
    /// named like a preset is none), sorted.
    private func presetFileNames() -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: presetsDirectory.path)) ?? []
        return files.filter { name in
            var info = stat()
            return name.hasSuffix(".json") && stat(presetsDirectory.appendingPathComponent(name).path, &info) == 0
                && (info.st_mode & S_IFMT) == S_IFREG
        }.map { String($0.dropLast(5)) }.filter(Self.isValidName).sorted()
    }

    /// The preset called `name`: a built-in, else `presets/NAME.json`.
    public func load(_ name: String) throws -> BeautyPreset {
        if let preset = BeautyPreset.builtIn(name) { return preset }
        try Self.checkName(name)
        let url = fileURL(name)
        guard let data = Self.readFile(url.path, limit: BeautyPreset.maxBytes + 1) else {
            throw PresetError(file: name, reason: "no such preset (built-in: \(BeautyPreset.builtInNames.joined(separator: ", ")); user presets live in \(presetsDirectory.path))")
        }
        return try Self.decode(data, file: url.path).lutRebased(on: presetsDirectory)
    }

    /// Whether `resolve` reads `text` as a preset file rather than a preset's name.
    public static func isFileReference(_ text: String) -> Bool { text.contains("/") || text.hasSuffix(".json") }

    /// What `--preset` names: a preset file when `text` holds a `/` or ends in `.json`, else a
    /// built-in or saved preset by name (`load`).
    public func resolve(_ text: String) throws -> BeautyPreset {
        guard Self.isFileReference(text) else { return try load(text) }
        guard let handle = FileHandle(forReadingAtPath: text) else { throw PresetError(file: text, reason: "cannot read the file") }
        defer { try? handle.close() }
        // One byte past the limit is enough to refuse a larger file (or a device that never ends).
        let read: Data?
        do {
            read = try handle.read(upToCount: BeautyPreset.maxBytes + 1)
        } catch {
            var isDirectory: ObjCBool = false
            let folder = FileManager.default.fileExists(atPath: text, isDirectory: &isDirectory) && isDirectory.boolValue
            throw PresetError(file: text, reason: folder ? "cannot read the file: it is a folder" : "cannot read the file")
        }
        guard let data = read else { throw PresetError(file: text, reason: "empty file") }
        return try Self.decode(data, file: text).lutRebased(on: URL(fileURLWithPath: text).deletingLastPathComponent())
    }

    /// A preset file's JSON (`BeautyPreset.decode`), refused when a key appears twice in one
    /// object: JSON readers keep one silently, so a hand edit appended after it was lost.
    public static func decode(_ data: Data, file: String) throws -> BeautyPreset {
        let preset = try BeautyPreset.decode(data, file: file)
        if let repeated = JSONDuplicateKeys.first(in: data) {
            throw PresetError(file: file, reason: "field \(repeated) appears twice (JSON readers would keep one silently)")
        }
        return preset
    }

    /// Writes `presets/NAME.json` atomically; an older one of that name is replaced only when
    /// `replacing` (else `OutputFileError.exists`).
    public func save(_ preset: BeautyPreset, as name: String, replacing: Bool = true) throws {
        try Self.checkName(name)
        guard BeautyPreset.builtIn(name) == nil else {
            throw PresetError(file: name, reason: "is a built-in preset; save under another name")
        }
        let url = fileURL(name)
        try preset.validate(file: url.path)
        try Directory.create(presetsDirectory.path)
        var entry = stat()
        if lstat(url.path, &entry) == 0 {
            guard replacing else { throw OutputFileError.exists(path: url.path) }
            // A link or a FIFO at the name is replaced, never written through: a link to another
            // preset or to a LUT file would have overwritten it, a FIFO blocked, /dev/null lost it.
            if entry.st_mode & S_IFMT != S_IFREG { unlink(url.path) }
        }
        try OutputFile.write(try preset.encoded(), to: url.path, policy: replacing ? .replace : .noClobber)
    }

    /// At most `limit` bytes of the regular file at `path` (a link followed); nil where there is
    /// none or it is no regular file (a FIFO would block the read, a device never end, and a
    /// huge file was read whole before its size was refused).
    static func readFile(_ path: String, limit: Int) -> Data? {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while data.count < limit {
            let count = read(descriptor, &buffer, min(buffer.count, limit - data.count))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            data.append(buffer, count: count)
        }
        return data
    }

    /// Removes a user preset; clears the default setting when it named this preset.
    public func delete(_ name: String) throws {
        guard BeautyPreset.builtIn(name) == nil else { throw PresetError(file: name, reason: "is a built-in preset and cannot be deleted") }
        try Self.checkName(name)
        let url = fileURL(name)
        guard FileManager.default.fileExists(atPath: url.path) else { throw PresetError(file: name, reason: "no such user preset in \(presetsDirectory.path)") }
        guard unlink(url.path) == 0 else {
            throw PresetError(file: url.path, reason: "cannot delete (\(String(cString: strerror(errno))))")
        }
        if (try? defaultName()) == name { try setDefault(nil) }
    }

    /// The name in `default-preset`, or nil when there is none.
    public func defaultName() throws -> String? {
        // A name is short: a file larger than this holds none (read no further, quote no more).
        guard let data = Self.readFile(defaultFile.path, limit: 1024) else { return nil }
        let name = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { return nil }
        guard Self.isValidName(name), data.count < 1024 else {
            let shown = String(name.prefix(64).map { $0.isASCII && ($0.asciiValue ?? 0) < 32 ? "?" : $0 })
            throw PresetError(file: defaultFile.path, reason: "'\(shown)\(name.count > 64 ? "…" : "")' is not a preset name")
        }
        return name
    }

    /// Sets (or with nil clears) the default; the preset must exist and load.
    public func setDefault(_ name: String?) throws {
        guard let name else {
            guard unlink(defaultFile.path) == 0 || errno == ENOENT else {
                throw PresetError(file: defaultFile.path, reason: "cannot delete (\(String(cString: strerror(errno))))")
            }
            return
        }
        _ = try load(name)
        try Directory.create(root.path)
        try OutputFile.write(Data((name + "\n").utf8), to: defaultFile.path)
    }

    /// The default preset and its name, or nil when none is set.
    public func defaultPreset() throws -> (name: String, preset: BeautyPreset)? {
        guard let name = try defaultName() else { return nil }
        do {
            return (name, try load(name))
        } catch let error as PresetError {
            // Said where it comes from: the user named no preset.
            throw PresetError(file: error.file, reason: error.reason + " (it is the default preset: velvet presets default NAME|--clear changes it)")
        }
    }

    /// A name `resolve` reads as a name: no '/', and not ending in `.json` (both mean a file).
    public static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.count) && !name.hasPrefix(".") && !name.hasSuffix(".json")
            && name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_.".unicodeScalars.contains($0)) }
    }

    public static let nameRule = "not a valid preset name (1-64 letters, digits, '-', '_', '.'; not starting with '.' "
        + "nor ending in .json, which --preset reads as a file)"

    static func checkName(_ name: String) throws {
        guard isValidName(name) else { throw PresetError(file: name, reason: nameRule) }
    }
}

extension BeautyPreset {
    /// This preset with a relative LUT file read from `folder` (the preset file's own), as a
    /// path in a file is read: not from wherever a render runs.
    func lutRebased(on folder: URL) -> BeautyPreset {
        guard case .file(let path) = lut.source, !path.hasPrefix("/") else { return self }
        var preset = self
        preset.lut.source = .file(folder.appendingPathComponent(path).standardizedFileURL.path)
        return preset
    }
}
