import Foundation
import VelvetFiles
import VelvetMedia

/// The files one command reads and writes, checked before any work:
/// - no output may be an input or another output of the command (a usage error; compared
///   by device and inode, and by resolved path for files that do not exist yet);
/// - every output's folder must exist and be writable, an existing output is refused unless
///   the policy overwrites, and an output a live velvet process is writing is refused;
///   partial files that dead processes left beside an output are removed.
struct CommandFiles {
    private var inputs: [(label: String, path: String)] = []
    private(set) var outputs: [(label: String, path: String)] = []
    let policy: OverwritePolicy

    init(policy: OverwritePolicy) { self.policy = policy }

    mutating func input(_ path: String, _ label: String = "the input") { inputs.append((label, path)) }
    mutating func output(_ path: String, _ label: String) { outputs.append((label, path)) }

    /// Runs every check; usage errors first.
    func check() throws {
        try checkDistinct()
        for output in outputs { try Self.claim(output.path, policy: policy) }
    }

    /// Usage error when an output is also an input or another output.
    func checkDistinct() throws {
        var taken: [String: (label: String, path: String, isInput: Bool)] = [:]
        for input in inputs { for key in SameFile.keys(input.path) where taken[key] == nil { taken[key] = (input.label, input.path, true) } }
        for output in outputs {
            let keys = SameFile.keys(output.path)
            if let earlier = keys.lazy.compactMap({ taken[$0] }).first {
                throw UsageError(earlier.isInput
                    ? "\(output.label) \(output.path) is \(earlier.label) \(earlier.path): it would be overwritten; write somewhere else"
                    : "\(earlier.label) \(earlier.path) and \(output.label) \(output.path) are the same file: give each output its own path")
            }
            for key in keys { taken[key] = (output.label, output.path, false) }
        }
    }

    /// Runtime checks for one output (exit 1): writable folder, the policy, live writers.
    static func claim(_ path: String, policy: OverwritePolicy) throws {
        try OutputFile.checkDirectory(of: path)
        if policy != .overwrite, FileManager.default.fileExists(atPath: path) { throw OutputFileError.exists(path: path) }
        if let pid = PartialFiles.clearStale(of: path) { throw OutputFileError.busy(path: path, pid: pid) }
    }

    /// Usage error when an output cannot be encoded as asked (extension, pixel format).
    static func checkEncoder(_ output: String, _ settings: EncoderSettings) throws {
        if let problem = EncoderCheck.problem(output: output, settings: settings) { throw UsageError(problem) }
    }
}
