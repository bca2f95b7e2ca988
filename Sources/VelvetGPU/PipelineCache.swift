import CVulkan
import Foundation
import VelvetFiles

/// Compiled pipelines kept on disk, so a fresh process (a new container, a render node whose
/// driver cache is empty) does not compile every kernel again. One file per kernel and
/// specialisation, `<directory>/<device>/<kernel>.bin`: <device> names the vendor, device,
/// driver version and the driver's cache UUID, <kernel> is the FNV-1a of the kernel's name,
/// SPIR-V and specialisation. A file is a magic, the FNV-1a of the rest, and the driver's
/// cache data; one that is corrupt, truncated or made by another device is ignored with a
/// warning and written anew. Files are written through `OutputFile` (temp then rename), so
/// processes sharing the folder never see half a file. Kernels compile on several threads
/// (`PipelineCompiler`): one file is written by one thread at a time (the temporary name is
/// per process), so two kernels alike compiling at once write it once.
///
/// The folder is `$VELVET_PIPELINE_CACHE`, else `$XDG_CACHE_HOME/velvet/pipelines`, else
/// `~/.cache/velvet/pipelines`; `VELVET_PIPELINE_CACHE=off` turns the cache off.
public final class PipelineCache: @unchecked Sendable {
    /// The folder of this device's files; nil when the cache is off.
    public let directory: String?
    private let vendorID: UInt32
    private let deviceID: UInt32
    private let uuid: [UInt8]
    private let lock = NSLock()
    private var counts = (hits: 0, misses: 0)
    private var warningsSeen: [String] = []
    private var writing: Set<String> = []

    static let magic = Array("VLVTPC01".utf8)
    /// Magic, then the payload's FNV-1a.
    static let prefixBytes = 16
    /// VkPipelineCacheHeaderVersionOne.
    static let vulkanHeaderBytes = 32

    /// Pipelines found on disk, and those compiled and written, since the context opened.
    public var hits: Int { lock.withLock { counts.hits } }
    public var misses: Int { lock.withLock { counts.misses } }
    /// The warnings printed so far (files ignored).
    public var warnings: [String] { lock.withLock { warningsSeen } }

    init(root: String?, properties: VkPhysicalDeviceProperties) {
        vendorID = properties.vendorID
        deviceID = properties.deviceID
        let uuid = withUnsafeBytes(of: properties.pipelineCacheUUID) { Array($0) }
        self.uuid = uuid
        directory = root.map { root in
            let uuidHex = uuid.map { String(format: "%02x", $0) }.joined()
            let device = String(format: "%04x-%04x-%08x-", properties.vendorID, properties.deviceID, properties.driverVersion) + uuidHex
            return (root as NSString).appendingPathComponent(device)
        }
    }

    /// The cache folder the environment names; nil when it turns the cache off.
    public static func root(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let explicit = environment["VELVET_PIPELINE_CACHE"], !explicit.isEmpty {
            return ["off", "0", "no"].contains(explicit.lowercased()) ? nil : explicit
        }
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") {
            return (cache as NSString).appendingPathComponent("velvet/pipelines")
        }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return (home as NSString).appendingPathComponent(".cache/velvet/pipelines")
    }

    /// One kernel's entry: the driver cache data found on disk, if any was valid.
    struct Entry {
        let path: String?
        let initialData: Data?
    }

    func entry(name: String, spirv: [UInt32], specialization: [UInt32]) -> Entry {
        guard let directory else { return Entry(path: nil, initialData: nil) }
        var hash = FNV1a()
        hash.update(name)
        spirv.withUnsafeBytes { hash.update($0) }
        specialization.withUnsafeBytes { hash.update($0) }
        let path = (directory as NSString).appendingPathComponent(hash.hex + ".bin")
        if let kind = Self.notAFile(path) {
            // A FIFO would block the read until someone wrote to it.
            warn("ignoring pipeline cache file \(path): \(kind)")
            return Entry(path: path, initialData: nil)
        }
        guard let file = FileManager.default.contents(atPath: path) else { return Entry(path: path, initialData: nil) }
        switch validate(file) {
        case .success(let payload):
            return Entry(path: path, initialData: payload)
        case .failure(let reason):
            warn("ignoring pipeline cache file \(path): \(reason)")
            return Entry(path: path, initialData: nil)
        }
    }

    private enum Check { case success(Data), failure(String) }

    private func validate(_ file: Data) -> Check {
        let bytes = [UInt8](file)
        guard bytes.count >= Self.prefixBytes + Self.vulkanHeaderBytes, Array(bytes.prefix(8)) == Self.magic else {
            return .failure("not a Velvet pipeline cache (or truncated)")
        }
        func word32(_ at: Int) -> UInt32 { bytes[at..<at + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) } }
        let stored = bytes[8..<16].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        var hash = FNV1a()
        hash.update(bytes[Self.prefixBytes...])
        guard hash.value == stored else { return .failure("its checksum does not match (damaged)") }
        let header = Self.prefixBytes
        guard word32(header) >= UInt32(Self.vulkanHeaderBytes), word32(header + 4) == 1 /* VERSION_ONE */,
              word32(header + 8) == vendorID, word32(header + 12) == deviceID,
              Array(bytes[(header + 16)..<(header + 32)]) == uuid else {
            return .failure("made by another device or driver")
        }
        return .success(Data(bytes[Self.prefixBytes...]))
    }

    /// Counts a kernel's lookup; on a miss writes what the driver's cache now holds.
    func finish(_ entry: Entry, cache: VkPipelineCache, device: VkDevice) {
        lock.withLock {
            if entry.initialData != nil { counts.hits += 1 } else { counts.misses += 1 }
        }
        guard entry.initialData == nil, let path = entry.path, let directory else { return }
        var size = 0
        guard vkGetPipelineCacheData(device, cache, &size, nil) == VK_SUCCESS, size >= Self.vulkanHeaderBytes else { return }
        var payload = [UInt8](repeating: 0, count: size)
        guard vkGetPipelineCacheData(device, cache, &size, &payload) == VK_SUCCESS else { return }
        payload.removeLast(payload.count - size)
        var hash = FNV1a()
        hash.update(payload)
        let file = Self.magic + withUnsafeBytes(of: hash.value.littleEndian) { Array($0) } + payload
        guard lock.withLock({ writing.insert(path).inserted }) else { return }
        defer { lock.withLock { _ = writing.remove(path) } }
        do {
            // Under the lock: two threads making the folder at once could see each other's mkdir fail.
            try lock.withLock { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
            // A FIFO, device or socket there (or a link to one) would be written through, and a
            // FIFO would block the write: its entry goes, and a file is written in its place.
            if Self.notAFile(path) != nil { unlink(path) }
            try OutputFile.write(Data(file), to: path)
        } catch {
            // A cache that cannot be written costs only the next start's compile time: one line
            // for the folder, not one per pipeline.
            warn("cannot write the pipeline cache in \(directory): \(Self.reason(error, directory: directory))")
        }
    }

    /// What is at `path` when it is something other than a file or a folder (following a
    /// link); nil when it is a file, a folder or nothing.
    private static func notAFile(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG, S_IFDIR: return nil
        case S_IFIFO: return "a FIFO, not a file"
        default: return "a device or socket, not a file"
        }
    }

    /// Why the cache could not be written, in a few words (no Foundation error dump).
    private static func reason(_ error: Error, directory: String) -> String {
        // The nearest folder on the way that is something else (VELVET_PIPELINE_CACHE naming a file).
        var url = URL(fileURLWithPath: directory)
        while url.path != "/" {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) {
                if !isDirectory.boolValue { return "\(url.path) is not a folder" }
                break
            }
            url.deleteLastPathComponent()
        }
        if case .cannotWrite(_, let reason)? = error as? OutputFileError { return reason }
        return (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
    }

    private func warn(_ message: String) {
        let first = lock.withLock { () -> Bool in
            guard !warningsSeen.contains(message) else { return false }
            warningsSeen.append(message)
            return true
        }
        if first { FileHandle.standardError.write(Data("velvet: warning: \(message)\n".utf8)) }
    }
}
