import Foundation
import VelvetFace
import VelvetFiles
import VelvetGPU
import VelvetBeauty
import VelvetMedia

/// The files one command reads and writes, checked before any work:
/// - no output may be an input or another output of the command (a usage error; compared
///   by device and inode, and by resolved path for files that do not exist yet);
/// - every output's folder must exist and be writable, an existing output is refused unless
///   the policy overwrites, and an output a live velvet process is writing is refused;
///   partial files that dead processes left beside an output are removed;
/// - `-` (standard input or output) only where the command streams (`render`), never a
///   terminal, and compared by what is open there: `render x.mkv -o - >x.mkv` is refused.
struct CommandFiles {
    private var inputs: [(label: String, path: String)] = []
    private(set) var outputs: [(label: String, path: String)] = []
    let policy: OverwritePolicy
    /// Whether `-` may be the input and the output (a command that reads its input once).
    let streams: Bool

    static let standardStream = "-"

    init(policy: OverwritePolicy, streams: Bool = false) { (self.policy, self.streams) = (policy, streams) }

    /// An image sequence (`frame%04d.png`) counts as each of its files.
    mutating func input(_ path: String, _ label: String = "the input") {
        inputs.append((label, path))
        if path != Self.standardStream, ImageSequence.isPattern(path) {
            inputs += ImageSequence.files(path).map { ("a frame of \(label) sequence", $0) }
        }
    }

    /// The model files a tracking command reads (`--models DIR`, else the standard folder):
    /// `analyze --models m --tracks m/face_landmark.tflite` would have replaced a model.
    mutating func modelFiles(_ directory: String?) {
        let files = directory.map { FaceModelFiles(directory: URL(fileURLWithPath: $0, isDirectory: true)) } ?? .standard
        for model in FaceModelName.allCases {
            input(files.expectedURL(model).path, "the model file")
        }
    }

    /// The files a preset came from and reads, which no output may overwrite either: a preset
    /// given as a file (`--preset look.json`); a saved preset given by name, or with none given
    /// the default-preset file and the saved preset it names; and the preset's LUT file.
    mutating func presetFiles(given: String?, preset: BeautyPreset) {
        let store = PresetStore.standard()
        if let given, PresetStore.isFileReference(given) {
            input(given, "the preset file")
        } else if let name = given ?? (try? store.defaultName()) {
            if BeautyPreset.builtIn(name) == nil { input(store.fileURL(name).path, "the saved preset file") }
        }
        if given == nil { input(store.defaultFile.path, "the default-preset file") }
        if case .file(let lut) = preset.lut.source { input(lut, "the LUT file") }
    }
    mutating func output(_ path: String, _ label: String) { outputs.append((label, path)) }

    /// Runs every check; usage errors first.
    func check() throws {
        try checkDistinct()
        for output in outputs where output.path != Self.standardStream { try Self.claim(output.path, policy: policy) }
    }

    /// `VELVET_TRACE` naming one of the command's files would replace it with the trace: the
    /// trace is not written then (one warning), the command runs as asked.
    private func checkTrace() {
        guard let trace = Trace.shared else { return }
        for file in inputs + outputs where file.path != Self.standardStream && SameFile.check(file.path, trace.path) {
            trace.refuse("\(trace.path) would replace \(file.label) \(file.path)")
            return
        }
    }

    /// Usage error when an output is also an input or another output, or `-` is where it cannot
    /// be; the trace (`VELVET_TRACE`) is kept from replacing any of them.
    func checkDistinct() throws {
        try checkStandardStreams()
        var taken: [String: (label: String, path: String, isInput: Bool)] = [:]
        for input in inputs {
            for key in Self.keys(input.path, descriptor: STDIN_FILENO) where taken[key] == nil { taken[key] = (input.label, input.path, true) }
        }
        for output in outputs {
            let keys = Self.keys(output.path, descriptor: STDOUT_FILENO)
            if let earlier = keys.lazy.compactMap({ taken[$0] }).first {
                throw UsageError(earlier.isInput
                    ? "\(output.label) \(output.path) is \(earlier.label) \(earlier.path): it would be overwritten; write somewhere else"
                    : "\(earlier.label) \(earlier.path) and \(output.label) \(output.path) are the same file: give each output its own path")
            }
            for key in keys { taken[key] = (output.label, output.path, false) }
        }
        try checkSequences()
        checkTrace()
    }

    /// An image sequence output (`frame%04d.png`) names many files: none may be an input, a
    /// file it holds now (a link to an input included), or another output's.
    private func checkSequences() throws {
        let sequences = outputs.filter { $0.path != Self.standardStream && ImageSequence.isPattern($0.path) }
        for sequence in sequences {
            guard ImageSequence.isUsable(sequence.path) else { throw UsageError("\(sequence.label) \(sequence.path): \(ImageSequence.unusablePattern)") }
            // Keys once, not a comparison per pair: a sequence input and output may hold thousands of files.
            let present = Set(ImageSequence.presentOutputs(sequence.path).flatMap(SameFile.keys))
            for input in inputs where input.path != Self.standardStream {
                if ImageSequence.number(of: input.path, in: sequence.path, same: SameFile.check) != nil
                    || !present.isDisjoint(with: SameFile.keys(input.path)) {
                    throw UsageError("\(sequence.label) \(sequence.path) would overwrite \(input.label) \(input.path): write somewhere else")
                }
            }
            for other in outputs where other.path != sequence.path && other.path != Self.standardStream {
                let meets = ImageSequence.isPattern(other.path)
                    ? Self.shareAName(sequence.path, other.path)
                    : ImageSequence.number(of: other.path, in: sequence.path, same: SameFile.check) != nil
                if meets {
                    throw UsageError("\(sequence.label) \(sequence.path) and \(other.label) \(other.path) name the same file: give each output its own path")
                }
            }
        }
    }

    /// Whether two sequences give a frame the same file (`o%03d` and `o%3d`, which FFmpeg
    /// pads alike; `o%d` and `o%03d` from frame 100), checked at a frame of each width.
    private static func shareAName(_ one: String, _ other: String) -> Bool {
        ImageSequence.sampleNumbers.contains { number in
            guard let a = ImageSequence.name(one, number), let b = ImageSequence.name(other, number) else { return false }
            return SameFile.check(a, b)
        }
    }

    /// `--json` prints to standard output: where that is one of the command's files (`>> in.mp4`,
    /// `-o x.mkv > x.mkv`), the summary would go into it. A terminal or a device (/dev/null) is
    /// no file of the command's, whatever else writes there; a pipe is when the command also
    /// names it (`-o /dev/stdout`).
    func checkSummaryDestination() throws {
        if StandardStreams.outputIsClosed {
            FailureReport.shared.alsoAsJSON(false)
            throw UsageError("--json prints to standard output, which is closed: redirect it to a file or a pipe")
        }
        var info = stat()
        guard fstat(STDOUT_FILENO, &info) == 0, [S_IFREG, S_IFIFO, S_IFSOCK].contains(info.st_mode & S_IFMT) else { return }
        let stdout = Set(SameFile.keys(descriptor: STDOUT_FILENO, streams: true))
        for file in inputs + outputs where file.path != Self.standardStream && !stdout.isDisjoint(with: SameFile.keys(file.path)) {
            FailureReport.shared.alsoAsJSON(false) // nor the error's JSON
            throw UsageError("--json prints to standard output, which is \(file.label) \(file.path): redirect it elsewhere")
        }
    }

    /// A path's identity; for `-` that of the file open on `descriptor`.
    private static func keys(_ path: String, descriptor: Int32) -> [String] {
        path == standardStream ? SameFile.keys(descriptor: descriptor) : SameFile.keys(path)
    }

    private func checkStandardStreams() throws {
        let input = inputs.first { $0.path == Self.standardStream }, output = outputs.first { $0.path == Self.standardStream }
        if !streams, let stream = input ?? output { throw Self.streamRefusal(stream.label, isInput: input != nil) }
        if input != nil, StandardStreams.inputIsClosed {
            throw UsageError("the input is - but standard input is closed: pipe a video in (… | velvet render - …)")
        }
        if output != nil, StandardStreams.outputIsClosed {
            throw UsageError("-o - writes video to standard output, which is closed: pipe or redirect it")
        }
        if input != nil, isatty(STDIN_FILENO) == 1 {
            throw UsageError("the input is - but standard input is a terminal: pipe a video in (… | velvet render - …)")
        }
        if output != nil, isatty(STDOUT_FILENO) == 1 {
            throw UsageError("-o - writes video to standard output, which is a terminal: pipe or redirect it")
        }
    }

    /// Runtime checks for one output (exit 1): writable folder, the policy, live writers.
    static func claim(_ path: String, policy: OverwritePolicy) throws {
        try OutputFile.checkDirectory(of: path)
        if policy != .overwrite, FileManager.default.fileExists(atPath: path) { throw OutputFileError.exists(path: path) }
        // An image sequence output: its first files, as a sequence input would be read, and
        // the partials of its frames (a live writer's refuse it; dead writers' are removed).
        if ImageSequence.isPattern(path) {
            if policy != .overwrite, let first = ImageSequence.files(path).first { throw OutputFileError.exists(path: first) }
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            if let pid = PartialFiles.clearStale(in: folder, matching: { ImageSequence.isFrame(folder + "/" + $0, of: path) }) {
                throw OutputFileError.busy(path: path, pid: pid)
            }
        }
        // Partials lie beside the file a link names; a device or FIFO has none.
        if case .file(let file) = try OutputTarget.of(path), let pid = PartialFiles.clearStale(of: file) {
            throw OutputFileError.busy(path: path, pid: pid)
        }
    }

    /// Usage error when a benchmark's scratch file (which it always overwrites, in `--work-dir`)
    /// is the photo it reads: `bench media --photo w/velvet-bench-plain.mp4 --work-dir w`.
    static func checkScratch(photo: String, _ scratch: [String]) throws {
        var files = CommandFiles(policy: .overwrite)
        files.input(photo, "the photo")
        for path in scratch { files.output(path, "the benchmark's scratch file") }
        try files.checkDistinct()
    }

    /// Usage error when an output cannot be encoded as asked (extension, pixel format).
    /// - Parameter streams: whether the command writes `-` (standard output) at all; where it
    ///   does not, `-` is refused for that, not asked for a format it could not use anyway.
    static func checkEncoder(_ output: String, _ settings: EncoderSettings, streams: Bool = true) throws {
        if !streams && output == standardStream { throw streamRefusal("-o", isInput: false) }
        if let problem = EncoderCheck.problem(output: output, settings: settings) { throw UsageError(problem) }
    }

    /// A folder or a name prefix given as `-`: `-` is standard input or output, never a name.
    static func refuseStandardStream(_ value: String?, option: String) throws {
        if value == standardStream {
            throw UsageError("\(option) -: - is standard input or output, which \(option) cannot be; write ./- for a name -")
        }
    }

    private static func streamRefusal(_ label: String, isInput: Bool) -> UsageError {
        UsageError("\(label) - (standard \(isInput ? "input" : "output")) works only with velvet render, which reads its input once")
    }
}
