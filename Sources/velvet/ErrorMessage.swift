import Foundation
import VelvetGPU
import VelvetMedia

/// The one line a user sees for an error, and the exit code it gets. Our own errors say what
/// happened already; Foundation's (a file the OS refused) are reduced to the path and the
/// OS's reason instead of a dump like `Error Domain=NSCocoaErrorDomain Code=516 …`.
enum ErrorMessage {
    /// 2 for a wrong command line (a `--device` that names no device included), 130 for a
    /// library cancellation, else 1.
    static func exitCode(for error: Error) -> Int32 {
        switch error {
        case is UsageError: return 2
        case GPUError.deviceNotFound, GPUError.deviceIndexOutOfRange: return 2
        case MediaError.interrupted: return 130
        default: return 1
        }
    }

    static func text(for error: Error) -> String {
        let text: String
        switch error {
        case let usage as UsageError: text = usage.message
        case let cocoa as CocoaError: text = describe(cocoa)
        case let posix as POSIXError: text = String(cString: strerror(posix.code.rawValue))
        default: text = "\(error)"
        }
        return (text + openFileLimitHint(text)).split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    /// Under an open-file limit too low for the driver, any error names the limit, as a missing
    /// device names it: which fails first depends on what the command opened first, and a
    /// library may report the file it could not open as another error (FFmpeg's picture
    /// writer at `ulimit -n 5`: "Input/output error").
    private static func openFileLimitHint(_ text: String) -> String {
        guard let limit = OpenFileLimit.tooLow, !text.contains("open-file limit") else { return "" }
        return " (the open-file limit is \(limit), ulimit -n: raise it to \(OpenFileLimit.driverNeeds) or more)"
    }

    private static func describe(_ error: CocoaError) -> String {
        let reason: String
        if let posix = error.underlying as? POSIXError {
            reason = String(cString: strerror(posix.code.rawValue))
        } else if let explanation = error.userInfo[NSDebugDescriptionErrorKey] as? String {
            reason = explanation // e.g. JSON encoding: "Invalid number value (nan) in JSON write"
        } else {
            switch error.code {
            case .fileNoSuchFile, .fileReadNoSuchFile: reason = "no such file"
            case .fileWriteFileExists: reason = "a file is in the way"
            case .fileReadNoPermission, .fileWriteNoPermission: reason = "permission denied"
            case .fileWriteOutOfSpace: reason = "no space left on device"
            case .fileWriteVolumeReadOnly: reason = "read-only file system"
            case .fileReadCorruptFile, .propertyListReadCorrupt: reason = "the data is not in the expected format"
            default: reason = error.localizedDescription
            }
        }
        return (error.filePath ?? error.url?.path).map { "\($0): \(reason)" } ?? reason
    }
}
