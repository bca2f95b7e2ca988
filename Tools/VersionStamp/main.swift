import Foundation

// Writes the Swift file that tells `velvet --version` which source it was built from:
//   VersionStamp PACKAGE_DIR OUTPUT.swift
// It runs `git describe --always --dirty --tags` in PACKAGE_DIR at build time, so the
// binary needs no git at run time; without git or outside a checkout it says "unknown".
let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: VersionStamp PACKAGE_DIR OUTPUT.swift\n".utf8))
    exit(2)
}

func describe(_ directory: String) -> String {
    let git = ["/usr/bin/git", "/usr/local/bin/git"].first { FileManager.default.isExecutableFile(atPath: $0) }
    guard let git else { return "unknown" }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: git)
    process.arguments = ["-C", directory, "describe", "--always", "--dirty", "--tags"]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return "unknown" }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    return process.terminationStatus == 0 && !text.isEmpty ? text : "unknown"
}

let described = describe(arguments[1]).replacingOccurrences(of: "\\", with: "").replacingOccurrences(of: "\"", with: "")
let source = """
// Generated at build time by Tools/VersionStamp; not in git.
enum BuildStamp {
    /// `git describe --always --dirty --tags` of the source this binary was built from, or "unknown".
    static let gitDescribe = "\(described)"
}

"""
let url = URL(fileURLWithPath: arguments[2])
if (try? String(contentsOf: url, encoding: .utf8)) != source {
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try source.write(to: url, atomically: true, encoding: .utf8)
}
