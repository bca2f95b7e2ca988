import Dispatch
import Foundation
import XCTest

/// Runs the tools the tests use as oracles (ffmpeg, ffprobe: installed by
/// Tools/setup.sh) and the built `velvet` binary.
public enum Tool {
    public struct Result {
        public var status: Int32
        public var output: Data
        public var stderr: String
        public var stdout: String { String(decoding: output, as: UTF8.self) }
        /// stderr less the validation layer's report (`VELVET_VALIDATION`): what a user sees.
        public var messages: String {
            stderr.split(separator: "\n", omittingEmptySubsequences: false)
                .filter { !$0.hasPrefix("velvet: validation layer on") }.joined(separator: "\n")
        }
    }

    /// - Parameter stdoutPath: send stdout to this file (e.g. /dev/full) instead of capturing it.
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                           stdoutPath: String? = nil) throws -> Result {
        let process = makeProcess(executable, arguments, environment: environment)
        let out = Pipe(), err = Pipe()
        if let stdoutPath {
            process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
            out.fileHandleForWriting.closeFile()
        } else {
            process.standardOutput = out
        }
        process.standardError = err
        try process.run()
        // Read both pipes concurrently so a chatty process cannot block on a full pipe; the
        // semaphore orders the reader's write before our read (ThreadSanitizer checks this).
        final class Box: @unchecked Sendable { var data = Data() }
        let errBox = Box()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            errBox.data = err.fileHandleForReading.readDataToEndOfFile()
            done.signal()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        done.wait()
        return Result(status: process.terminationStatus, output: outData, stderr: String(decoding: errBox.data, as: UTF8.self))
    }

    /// Starts a tool in the background (to signal it mid-work); stdout is discarded.
    public static func start(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Running {
        let process = makeProcess(executable, arguments, environment: environment)
        let stderrFile = FileManager.default.temporaryDirectory.appendingPathComponent("velvet-stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        try process.run()
        return Running(process: process, stderrFile: stderrFile)
    }

    /// A tool started by `start`.
    public final class Running {
        public let process: Process
        private let stderrFile: URL

        init(process: Process, stderrFile: URL) { (self.process, self.stderrFile) = (process, stderrFile) }
        deinit { try? FileManager.default.removeItem(at: stderrFile) }

        /// Sends `signal` and waits for the exit: the status and stderr.
        public func stop(with signal: Int32) -> (status: Int32, stderr: String) {
            kill(process.processIdentifier, signal)
            return wait()
        }

        public func wait() -> (status: Int32, stderr: String) {
            process.waitUntilExit()
            let text = (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
            return (process.terminationStatus, text)
        }
    }

    private static func makeProcess(_ executable: String, _ arguments: [String], environment: [String: String]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : "/usr/bin/\(executable)")
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        merged["XDG_RUNTIME_DIR"] = merged["XDG_RUNTIME_DIR"] ?? "/tmp"
        environment.forEach { merged[$0.key] = $0.value }
        process.environment = merged
        return process
    }

    /// Waits up to `seconds` for `condition`; returns whether it came true.
    @discardableResult
    public static func waitUntil(seconds: Double = 120, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    /// ffmpeg that must succeed.
    public static func ffmpeg(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y"] + arguments)
        if result.status != 0 {
            XCTFail("ffmpeg \(arguments.joined(separator: " ")) failed: \(result.stderr)", file: file, line: line)
            throw CocoaError(.fileWriteUnknown)
        }
    }

    public static func probe(_ path: String, _ entries: String, stream: String = "v:0") throws -> String {
        try run("ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries", entries, "-of", "csv=p=0", path])
            .stdout.split(separator: "\n").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ",").union(.whitespaces)) }
            .filter { !$0.isEmpty }.joined(separator: "\n")
    }

    /// Average PSNR (dB) of the first video streams of two files; infinity when identical.
    public static func psnr(_ a: String, _ b: String) throws -> Double {
        // Stored pixels, not display orientation: both files are compared as written.
        let result = try run("ffmpeg", ["-hide_banner", "-noautorotate", "-i", a, "-noautorotate", "-i", b,
                                        "-lavfi", "[0:v:0][1:v:0]psnr", "-f", "null", "-"])
        guard let range = result.stderr.range(of: "average:") else { return -1 }
        let value = result.stderr[range.upperBound...].prefix { !$0.isWhitespace }
        return value == "inf" ? .infinity : Double(value) ?? -1
    }

    /// MD5 of a stream's packets (stream copy), to prove audio passed through untouched.
    public static func streamMD5(_ path: String, _ stream: String) throws -> String {
        try run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", path, "-map", "0:\(stream)", "-c", "copy", "-f", "md5", "-"])
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// MD5 of every decoded video frame (stored orientation).
    public static func frameMD5s(_ path: String) throws -> String {
        try run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-noautorotate", "-i", path, "-map", "0:v:0",
                           "-f", "framemd5", "-"]).stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }
            .map { $0.split(separator: ",").last.map(String.init) ?? "" }.joined(separator: "\n")
    }

    /// Decoded pixels as raw bytes in `pixelFormat`.
    public static func pixels(_ path: String, _ pixelFormat: String) throws -> Data {
        try run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", path, "-frames:v", "1",
                           "-f", "rawvideo", "-pix_fmt", pixelFormat, "-"]).output
    }

    public static var velvet: String {
        let products = Bundle.main.bundleURL.deletingLastPathComponent()
        for candidate in [products.appendingPathComponent("velvet"), Bundle.main.bundleURL.appendingPathComponent("velvet")]
        where FileManager.default.isExecutableFile(atPath: candidate.path) {
            return candidate.path
        }
        return products.appendingPathComponent("velvet").path
    }
}

/// A temporary folder removed when the test ends.
public final class Scratch {
    public let url: URL
    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("velvet-media-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    /// Files in the folder, to show nothing partial was left behind.
    public var files: [String] { (try? FileManager.default.contentsOfDirectory(atPath: url.path))?.sorted() ?? [] }
}
