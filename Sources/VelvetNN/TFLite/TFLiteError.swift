import Foundation

/// Why a model could not be loaded. Messages are one line and say what to do
/// or what is wrong; `path` is prefixed when the model came from a file.
public struct TFLiteError: Error, CustomStringConvertible, Equatable, Sendable {
    public enum Reason: Equatable, Sendable {
        /// The file could not be read at all (missing, permissions, I/O).
        case unreadable(String)
        /// The bytes are not a TFLite flatbuffer.
        case notTFLite(String)
        /// An offset or length points past the end of the file.
        case truncated(String)
        /// The structure is inconsistent (bad index, bad shape, bad enum value).
        case malformed(String)
        /// Valid TFLite, but uses something this reader does not handle.
        case unsupported(String)
    }

    public let reason: Reason
    /// The model file, where known.
    public var path: String?

    public init(_ reason: Reason, path: String? = nil) {
        self.reason = reason
        self.path = path
    }

    static func truncated(_ message: String) -> TFLiteError { TFLiteError(.truncated(message)) }
    static func malformed(_ message: String) -> TFLiteError { TFLiteError(.malformed(message)) }
    static func unsupported(_ message: String) -> TFLiteError { TFLiteError(.unsupported(message)) }

    /// The same error, attributed to a file.
    func at(path: String?) -> TFLiteError {
        var copy = self
        if copy.path == nil { copy.path = path }
        return copy
    }

    public var message: String {
        switch reason {
        case .unreadable(let m): return "cannot read model file: \(m)"
        case .notTFLite(let m): return "not a TFLite model (\(m))"
        case .truncated(let m): return "model file truncated: \(m)"
        case .malformed(let m): return "malformed model: \(m)"
        case .unsupported(let m): return "unsupported model feature: \(m)"
        }
    }

    public var description: String {
        guard let path else { return message }
        return "\(path): \(message)"
    }
}
