import Foundation
import VelvetGPU
import VelvetMedia
import VelvetPipeline

/// `velvet batch`: many inputs into one output folder.
///   - resumable: an output that exists is finished (renders are renamed into place only
///     when complete) and is skipped; partial files left by a killed run are removed and
///     their inputs rendered again;
///   - `--shard I/N`: this process takes every N-th input (sorted by path) starting at I,
///     so job-array schedulers split the work with no coordinator;
///   - `--devices 0,1`: one worker per listed GPU, taking files from a shared queue.
enum BatchCommand {
    static func run(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        guard let outputDirectory = arguments.value("--output-dir") else { throw UsageError("batch needs --output-dir DIR") }
        var inputs = arguments.positional
        while arguments.takePositional() != nil {}
        if let list = arguments.value("--list") {
            guard let text = try? String(contentsOfFile: list, encoding: .utf8) else {
                throw MediaError.cannotOpen(path: list, reason: "cannot read the list")
            }
            inputs += text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        }
        let shard = try parseShard(arguments.value("--shard") ?? "0/1")
        let devices = (arguments.value("--devices") ?? ProcessInfo.processInfo.environment["VELVET_DEVICE"] ?? "")
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let quiet = arguments.flag("--quiet")
        let settings = try RenderCommand.encoderSettings(&arguments)
        // The render options are parsed once per worker (each has its own GPU); validate them now.
        let optionArguments = arguments
        _ = try BeautyArguments.parse(&arguments, store: .standard()) { _ in .identity(size: 2) }
        try arguments.finish()
        guard !inputs.isEmpty else { throw UsageError("batch needs input files (arguments or --list FILE)") }

        let unique = Array(Set(inputs)).sorted()
        // Checked over every input, not just this shard's, so all shards refuse alike.
        let byOutput = Dictionary(grouping: unique) { outputPath(for: $0, in: outputDirectory) }
        if let (output, clash) = byOutput.first(where: { $0.value.count > 1 }) {
            throw UsageError("\(clash.joined(separator: " and ")) would all be written to \(output): rename one or batch them separately")
        }
        try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        let mine = unique.enumerated().filter { $0.offset % shard.count == shard.index }.map(\.element)
        let jobs = BatchQueue(mine.map { ($0, outputPath(for: $0, in: outputDirectory)) })
        let report = BatchReport()
        // Ctrl-C: each worker's render stops and removes its partial file; the rest are not started.
        let cancellation = CancellationFlag()
        let interrupt = InterruptHandler(cancellation)
        defer { interrupt.stop() }
        let workers = (devices.isEmpty ? [nil] : devices.map { Optional($0) }).map { device in
            Thread {
                do {
                    let context = try GPUContext(request: device)
                    var workerArguments = optionArguments
                    let options = try BeautyArguments.parse(&workerArguments, store: .standard()) { try LUTLoader.load($0, context: context) }
                    let renderer = try VideoRenderer(context: context)
                    while !cancellation.isCancelled, let (input, output) = jobs.next() {
                        if FileManager.default.fileExists(atPath: output) {
                            report.add("skipped \(input) (done: \(output))", failed: false, quiet: quiet)
                            continue
                        }
                        removePartials(of: output)
                        do {
                            let effect = try options.map { try BeautyEffect(context: context, options: $0) }
                            let summary = try renderer.render(input: input, output: output, settings: settings, effect: effect,
                                                              cancellation: cancellation)
                            report.add("rendered \(input) -> \(output) (\(summary.frames) frames, \(context.device.name))", failed: false, quiet: quiet)
                        } catch MediaError.interrupted {
                            break
                        } catch {
                            report.add("failed \(input): \(error)", failed: true, quiet: quiet)
                        }
                    }
                } catch {
                    report.add("worker on device \(device ?? "default") failed: \(error)", failed: true, quiet: quiet)
                }
            }
        }
        workers.forEach { $0.stackSize = 8 << 20; $0.start() }
        while workers.contains(where: { !$0.isFinished }) { usleep(20_000) }
        if cancellation.isCancelled { throw MediaError.interrupted }
        print("batch: \(mine.count) of \(inputs.count) input(s) in shard \(shard.index)/\(shard.count): "
              + "\(report.failures) failed")
        if report.failures > 0 { throw BatchFailure(count: report.failures) }
    }

    struct BatchFailure: Error, CustomStringConvertible {
        let count: Int
        var description: String { "\(count) input(s) failed (see the lines above)" }
    }

    /// `I/N` with 0 <= I < N.
    static func parseShard(_ text: String) throws -> (index: Int, count: Int) {
        let parts = text.split(separator: "/").compactMap { Int($0) }
        guard parts.count == 2, parts[1] >= 1, (0..<parts[1]).contains(parts[0]) else {
            throw UsageError("--shard takes I/N with 0 <= I < N, got '\(text)'")
        }
        return (parts[0], parts[1])
    }

    /// Stills keep their extension; videos become .mp4.
    static func outputPath(for input: String, in directory: String) -> String {
        let url = URL(fileURLWithPath: input)
        let stillExtensions = ["png", "jpg", "jpeg"]
        let ext = stillExtensions.contains(url.pathExtension.lowercased()) ? url.pathExtension : "mp4"
        return directory + "/" + url.deletingPathExtension().lastPathComponent + "." + ext
    }

    /// Removes `.NAME.velvet-partial-*` files a killed run left beside `output`.
    static func removePartials(of output: String) {
        let url = URL(fileURLWithPath: output)
        let prefix = "." + url.lastPathComponent + ".velvet-partial-"
        let directory = url.deletingLastPathComponent()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] where name.hasPrefix(prefix) {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }
}

/// Inputs shared by the workers.
private final class BatchQueue: @unchecked Sendable {
    private let lock = NSLock()
    private var pending: [(String, String)]
    init(_ jobs: [(String, String)]) { pending = jobs }
    func next() -> (String, String)? { lock.withLock { pending.isEmpty ? nil : pending.removeFirst() } }
}

/// One line per input on stderr, and the failure count.
private final class BatchReport: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var failures = 0
    func add(_ line: String, failed: Bool, quiet: Bool) {
        lock.withLock {
            if failed { failures += 1 }
            if !quiet || failed { printError("velvet batch: \(line)") }
        }
    }
}
