/// Why an output could not be written or committed; each a single line.
public enum OutputFileError: Error, CustomStringConvertible, Equatable {
    case cannotWrite(path: String, reason: String)
    /// The output exists and may not be overwritten (ffmpeg's `-n`, and its answer when it
    /// cannot ask).
    case exists(path: String)
    /// A live velvet process is writing the same output.
    case busy(path: String, pid: Int32)

    public var description: String {
        switch self {
        case .cannotWrite(let path, let reason): return "cannot write \(path): \(reason)"
        case .exists(let path): return "\(path) exists (use -y to overwrite)"
        case .busy(let path, let pid): return "\(path) is being written by velvet process \(pid); wait for it or stop it"
        }
    }
}
