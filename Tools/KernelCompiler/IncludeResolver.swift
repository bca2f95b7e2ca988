import Foundation

/// GLSL source with every `#include "file"` expanded in place, and a map from each
/// expanded line back to the file and line it came from.
/// glslang 12's C API has no include callback, so the tool resolves includes itself.
struct ExpandedSource {
    var text: String
    /// origins[i] is the (path, 1-based line) of expanded line i + 1.
    var origins: [(path: String, line: Int)]

    func origin(ofLine line: Int) -> (path: String, line: Int) {
        guard line >= 1, line <= origins.count else { return (origins.first?.path ?? "?", line) }
        return origins[line - 1]
    }
}

struct IncludeResolver {
    var searchDirectories: [String]

    func expand(path: String) throws -> ExpandedSource {
        var result = ExpandedSource(text: "", origins: [])
        var included = Set<String>()
        var lines: [String] = []
        try expand(path: path, into: &lines, origins: &result.origins, included: &included, depth: 0)
        result.text = lines.joined(separator: "\n") + "\n"
        return result
    }

    /// Each file is included at most once (as if every .glsl had an include guard).
    private func expand(path: String, into lines: inout [String], origins: inout [(path: String, line: Int)],
                        included: inout Set<String>, depth: Int) throws {
        let canonical = URL(fileURLWithPath: path).standardizedFileURL.path
        guard !included.contains(canonical) else { return }
        included.insert(canonical)
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw KernelCompilerError(diagnostics: ["\(path):1: error: cannot read file"])
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        for (offset, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if let name = Self.includedName(in: line) {
                guard depth < 32 else {
                    throw KernelCompilerError(diagnostics: ["\(path):\(offset + 1): error: #include nested too deeply"])
                }
                guard let found = locate(name, besides: directory) else {
                    throw KernelCompilerError(diagnostics: ["\(path):\(offset + 1): error: cannot find included file '\(name)'"])
                }
                try expand(path: found, into: &lines, origins: &origins, included: &included, depth: depth + 1)
            } else {
                lines.append(String(line))
                origins.append((path, offset + 1))
            }
        }
    }

    private func locate(_ name: String, besides directory: String) -> String? {
        for candidate in [directory] + searchDirectories {
            let path = URL(fileURLWithPath: candidate).appendingPathComponent(name).path
            if FileManager.default.fileExists(atPath: path) { return path }
        }
        return nil
    }

    /// `#include "name"` -> name; anything else -> nil.
    static func includedName(in line: Substring) -> String? {
        let trimmed = line.drop(while: { $0 == " " || $0 == "\t" })
        guard trimmed.hasPrefix("#") else { return nil }
        let directive = trimmed.dropFirst().drop(while: { $0 == " " || $0 == "\t" })
        guard directive.hasPrefix("include") else { return nil }
        let rest = directive.dropFirst("include".count)
        guard let open = rest.firstIndex(of: "\""), let close = rest[rest.index(after: open)...].firstIndex(of: "\"") else {
            return nil
        }
        return String(rest[rest.index(after: open)..<close])
    }
}
