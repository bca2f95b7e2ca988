import Foundation
import VelvetFiles
import VelvetGPU
import VelvetMedia
import VelvetPipeline

/// `velvet batch`: many inputs into one output folder.
///   - resumable: an output is skipped when its `BatchRecord` proves it was rendered from
///     this input with these settings and is unchanged since; one the record shows was made
///     from another input or with other settings is rendered again; any other file in the
///     way is left alone (refused unless `-y`, which re-renders everything; `-n` never
///     replaces anything). Partial files left by dead runs are removed;
///   - `--shard I/N`: this process takes every N-th input (sorted by path) starting at I,
///     so job-array schedulers split the work with no coordinator;
///   - `--devices 0,1`: one worker per listed GPU, taking files from a shared queue.
enum BatchCommand {
    static func run(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        guard let outputDirectory = arguments.value("--output-dir") else { throw UsageError("batch needs --output-dir DIR") }
        try CommandFiles.refuseStandardStream(outputDirectory, option: "--output-dir")
        var inputs = arguments.positional
        while arguments.takePositional() != nil {}
        let list = arguments.value("--list")
        let shard = try parseShard(arguments.value("--shard") ?? "0/1")
        let givenDevices = arguments.value("--devices")
        let deviceList = givenDevices ?? ProcessInfo.processInfo.environment["VELVET_DEVICE"] ?? ""
        let entries = deviceList.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let devices = entries.filter { !$0.isEmpty }
        // An empty entry (',0', '0,,1') is a typo, not a device: refused, as a list of nothing is.
        if devices.count != entries.count, givenDevices != nil || !deviceList.isEmpty {
            throw UsageError("--devices (or VELVET_DEVICE) takes device indices or names separated by commas, got '\(deviceList)'")
        }
        let quiet = arguments.flag("--quiet")
        let allowTruncated = arguments.flag("--allow-truncated")
        let settings = try RenderCommand.encoderSettings(&arguments)
        let policy = try OverwritePolicy.parse(&arguments)
        let beauty = try BeautyArguments.parseRequest(&arguments, store: .standard())
        try arguments.finish()
        // Read after the usage checks, so a wrong command line never consumes standard input.
        if let list { inputs += try InputList.read(list) }
        guard !inputs.isEmpty else { throw UsageError("batch needs input files (arguments or --list FILE)") }
        if let sequence = inputs.first(where: ImageSequence.isPattern) {
            throw UsageError("batch takes files, and \(sequence) is an image sequence: render it with velvet render")
        }
        // Its output, named after it, would be read as a sequence (`bo/i%03d.png` writes i001.png).
        if let named = inputs.first(where: ImageSequence.namesFrameNumber) {
            throw UsageError("batch cannot name an output after \(named): its name holds a frame number pattern; "
                             + "rename it or render it with velvet render -o")
        }

        // Checked over every input, not just this shard's, so all shards refuse alike.
        let unique = Self.distinctFiles(inputs)
        let videoExtension = EncoderCheck.videoExtension(settings)
        let jobs = unique.map { (input: $0, output: outputPath(for: $0, in: outputDirectory, videoExtension: videoExtension)) }
        // By bytes: Linux holds "café" composed and decomposed as two files, Swift's == as one string.
        let byOutput = Dictionary(grouping: jobs, by: { Array($0.output.utf8) })
        if let clash = byOutput.values.first(where: { $0.count > 1 }), let output = clash.first?.output {
            throw UsageError("\(clash.map(\.input).joined(separator: " and ")) would all be written to \(output): rename one or batch them separately")
        }
        var files = CommandFiles(policy: policy)
        jobs.forEach { files.input($0.input, "input") }
        if let list, list != "-" { files.input(list, "input list") }
        if let beauty { files.presetFiles(given: beauty.presetText, preset: beauty.preset) }
        jobs.forEach { files.output($0.output, "output") }
        try files.checkDistinct()
        // Once per extension, named by the first output that has it.
        var checked: Set<String> = []
        for output in jobs.map(\.output) where checked.insert(URL(fileURLWithPath: output).pathExtension).inserted {
            try CommandFiles.checkEncoder(output, BatchJob.settings(settings, for: output))
        }
        try checkDevices(devices)

        try Directory.create(outputDirectory)
        let mine = jobs.enumerated().filter { $0.offset % shard.count == shard.index }.map(\.element)
        let job = try BatchJob(policy: policy, settings: settings, beauty: beauty, allowTruncated: allowTruncated)
        let queue = BatchQueue(mine)
        let report = BatchReport(quiet: quiet)
        let contexts = ContextList()
        // A signal ends the process (TerminationSignals): the partial file is removed, finished outputs stay.
        let workers = (devices.isEmpty ? [nil] : devices.map { Optional($0) }).map { device in
            Thread {
                do {
                    let context = try GPUContext(request: device)
                    contexts.add(context)
                    let renderer = try VideoRenderer(context: context)
                    let options = try beauty?.options { try LUTLoader.load($0, context: context) }
                    while let next = queue.next() {
                        do {
                            report.add(try job.run(next.input, next.output, renderer: renderer, options: options))
                        } catch {
                            report.add("failed \(next.input): \(ErrorMessage.text(for: error))", failed: true)
                        }
                    }
                } catch {
                    // Its inputs go to the other workers; those left when all are done fail below.
                    report.workerFailed("worker on device \(device ?? "default") failed: \(ErrorMessage.text(for: error))")
                }
            }
        }
        workers.forEach { $0.stackSize = 8 << 20; $0.start() }
        while workers.contains(where: { !$0.isFinished }) { usleep(20_000) }
        // No worker could start (a LUT no worker can read, a device lost): each input is a failure of its own.
        while let left = queue.next() {
            report.add("failed \(left.input): not rendered: \(report.firstWorkerFailure ?? "no worker started")", failed: true)
        }
        print("batch: \(mine.count) of \(unique.count) input(s) in shard \(shard.index)/\(shard.count): "
              + "\(report.failures) failed")
        try ValidationReport.check(contexts.all)
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

    /// Every `--devices` entry must name a device before a worker starts.
    private static func checkDevices(_ requests: [String]) throws {
        guard !requests.isEmpty else { return }
        let available = try GPUContext.availableDevices()
        for request in requests { _ = try DeviceSelector.choose(from: available, request: request) }
    }

    /// The inputs once each, in byte order (every shard sorts alike): one file named twice
    /// (`x.png ./x.png`, a link) is rendered once, and two files whose names differ only in
    /// their Unicode form are two files.
    static func distinctFiles(_ inputs: [String]) -> [String] {
        var seen = Set<String>()
        var distinct: [String] = []
        for input in inputs.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            let keys = SameFile.keys(input)
            guard seen.isDisjoint(with: keys) else { continue }
            seen.formUnion(keys)
            distinct.append(input)
        }
        return distinct
    }

    /// Stills keep their extension; videos get `videoExtension` (.mp4 unless the codec or
    /// `--format` needs another).
    static func outputPath(for input: String, in directory: String, videoExtension: String) -> String {
        let url = URL(fileURLWithPath: input)
        let stillExtensions = ["png", "jpg", "jpeg"]
        let ext = stillExtensions.contains(url.pathExtension.lowercased()) ? url.pathExtension : videoExtension
        let folder = directory.hasSuffix("/") ? directory : directory + "/" // "out/" gives out/x.mp4, not out//x.mp4
        return folder + url.deletingPathExtension().lastPathComponent + "." + ext
    }
}

/// One input of a batch: skip it when finished, else render it and record it.
private struct BatchJob: Sendable {
    let policy: OverwritePolicy
    let settings: EncoderSettings
    /// `--allow-truncated`: keep what decodes of a damaged input (its report line says so).
    let allowTruncated: Bool
    /// A hash of every setting that changes the output, kept in each output's record.
    let fingerprint: String

    init(policy: OverwritePolicy, settings: EncoderSettings, beauty: BeautyRequest?, allowTruncated: Bool) throws {
        (self.policy, self.settings, self.allowTruncated) = (policy, settings, allowTruncated)
        fingerprint = FNV1a.hex(try beauty?.fingerprint() ?? "no-effects") + FNV1a.hex(settings.fingerprint)
    }

    /// The batch's encoder settings for one output: a picture's encoder and container follow
    /// its extension (`outputPath` keeps a picture's), whatever `--format` says.
    static func settings(_ settings: EncoderSettings, for output: String) -> EncoderSettings {
        EncoderCheck.writesOnePicture(output: output, settings: settings.forPictures) ? settings.forPictures : settings
    }

    /// Returns the line to report.
    func run(_ input: String, _ output: String, renderer: VideoRenderer, options: BeautyOptions?) throws -> String {
        var replacing = policy == .overwrite
        // A killed run's half-written record goes too, also where the output is finished.
        _ = PartialFiles.clearStale(of: BatchRecord.path(for: output))
        if !replacing, FileManager.default.fileExists(atPath: output) {
            let finished = allowTruncated ? [fingerprint, BatchRecord.damaged(fingerprint)] : [fingerprint]
            switch BatchRecord.verdict(output: output, input: input, settings: finished) {
            case .finished: return "skipped \(input) (done: \(output))"
            case .outdated where policy == .unspecified: replacing = true
            case .outdated, .unproven: throw OutputFileError.exists(path: output)
            }
        }
        if let pid = PartialFiles.clearStale(of: output) { throw OutputFileError.busy(path: output, pid: pid) }
        let fingerprint = fingerprint
        let source = try BatchRecord.Source(input)
        let commit = CommitPolicy(replacesExisting: replacing, beforeRename: { finishedFile in
            guard let stamp = BatchRecord.Stamp(finishedFile) else { throw OutputFileError.cannotWrite(path: output, reason: "the finished file vanished") }
            try BatchRecord(source: source, settings: fingerprint, output: stamp).write(for: output)
        })
        let effect = try options.map { try BeautyEffect(context: renderer.context, options: $0) }
        let summary = try renderer.render(input: input, output: output, settings: Self.settings(settings, for: output),
                                          options: RenderOptions(allowTruncated: allowTruncated), effect: effect, commit: commit)
        // What was kept of a damaged input is finished only for runs that allow it (a run without
        // --allow-truncated renders it again, and fails as render does).
        if !summary.warnings.isEmpty, let stamp = BatchRecord.Stamp(output) {
            try BatchRecord(source: source, settings: BatchRecord.damaged(fingerprint), output: stamp).write(for: output)
        }
        let warnings = summary.warnings.map { "; warning: \($0)" }.joined()
        return "rendered \(input) -> \(output) (\(summary.frames) frame\(summary.frames == 1 ? "" : "s"), \(renderer.context.device.name))\(warnings)"
    }
}

/// Inputs shared by the workers.
private final class BatchQueue: @unchecked Sendable {
    private let lock = NSLock()
    private var pending: [(input: String, output: String)]
    init(_ jobs: [(input: String, output: String)]) { pending = jobs }
    func next() -> (input: String, output: String)? { lock.withLock { pending.isEmpty ? nil : pending.removeFirst() } }
}

/// The workers' GPU contexts, for the validation report at the end.
private final class ContextList: @unchecked Sendable {
    private let lock = NSLock()
    private var contexts: [GPUContext] = []
    func add(_ context: GPUContext) { lock.withLock { contexts.append(context) } }
    var all: [GPUContext] { lock.withLock { contexts } }
}

/// One line per input on stderr, and the failure count.
private final class BatchReport: @unchecked Sendable {
    private let lock = NSLock()
    private let quiet: Bool
    private(set) var failures = 0
    /// The first worker that could not start, for the inputs it leaves unrendered.
    private(set) var firstWorkerFailure: String?
    init(quiet: Bool) { self.quiet = quiet }
    func workerFailed(_ line: String) {
        lock.withLock {
            if firstWorkerFailure == nil { firstWorkerFailure = line }
            printError("velvet batch: \(line)")
        }
    }
    func add(_ line: String, failed: Bool = false) {
        lock.withLock {
            if failed { failures += 1 }
            if !quiet || failed { printError("velvet batch: \(line)") }
        }
    }
}
