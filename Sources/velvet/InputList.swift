import Foundation
import VelvetMedia

/// A `--list` file: one path per line. LF, CRLF and CR line ends alike, a UTF-8 byte-order
/// mark and a missing final newline are accepted; surrounding spaces are trimmed; empty
/// lines and lines starting with `#` are skipped.
enum InputList {
    /// `-` reads standard input (`find … | velvet batch --list - …`).
    static func read(_ path: String) throws -> [String] {
        if path == CommandFiles.standardStream {
            guard isatty(STDIN_FILENO) == 0 else { throw UsageError("--list - reads standard input, which is a terminal: pipe the list in") }
            return try parse(text(FileHandle.standardInput.readDataToEndOfFile(), path: path))
        }
        // Through a handle, so a pipe or FIFO (`--list <(find …)`) reads as a file does.
        guard let handle = FileHandle(forReadingAtPath: path), let data = try? handle.readToEnd() ?? Data() else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot read the list" : "no such file"
            throw MediaError.cannotOpen(path: path, reason: reason)
        }
        return try parse(text(data, path: path))
    }

    /// The list as text; a line that is not UTF-8 is refused, as it would be repaired into
    /// another file's name.
    private static func text(_ data: Data, path: String) throws -> String {
        if let text = String(validating: data, as: UTF8.self) { return text }
        let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let line = (lines.firstIndex { String(validating: $0, as: UTF8.self) == nil } ?? 0) + 1
        throw MediaError.cannotOpen(path: path, reason: "line \(line) is not UTF-8 text (velvet takes UTF-8 file names)")
    }

    static func parse(_ text: String) -> [String] {
        let body = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
        // Character.isNewline covers "\n", "\r" and "\r\n" (one Character in Swift).
        return body.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }
}
