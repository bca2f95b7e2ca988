import Foundation
import VelvetBeauty
import VelvetFace
import VelvetFiles
import VelvetGPU
import VelvetPipeline

/// The beauty options a user sets on the command line. Flags are written over a preset
/// (`--preset NAME`, else the default preset, else `natural`), so a flag always wins.
enum BeautyArguments {
    static var help: String {
        let lines = ["      --preset NAME|FILE  beauty preset: none, natural, soft, studio, glam, a saved one, or a preset",
                     "                          .json file (a FILE holds a / or ends in .json)",
                     "                          (default: the one set with `velvet presets default`, else natural)"]
            + BeautyPreset.knobs.compactMap(flagLine)
            + ["      --lut NAME|FILE     colour grade: \(BuiltInLUT.allCases.map(\.rawValue).joined(separator: ", ")),",
               "                          or a .cube / 512x512 .png LUT (sets --lut-strength to 1)",
               "      --detector short|full|auto   face detector (default auto)",
               "      --max-faces N       faces tracked, \(FaceTrackerOptions.maxFacesRange.lowerBound)-\(FaceTrackerOptions.maxFacesRange.upperBound) (default \(BeautyOptions().maxFaces); the largest are kept)",
               "      --faces all|largest|N[,M...]  the faces treated: all (default), the largest, or track",
               "                          IDs as velvet analyze reports them; the others keep their pixels",
               "      --look-ahead K      video: track K frames ahead and smooth the landmarks over the frames",
               "                          on both sides, filling short gaps; 0-30, 0 off (default 6 for files,",
               "                          0 for standard input)",
               "      --debug-view VIEW   render a view of the pipeline instead: mask (blend weight), zones",
               "                          (zone map over the skin), spots (spot fills), landmarks (mesh),",
               "                          teeth, eyes, under-eye, shine (the --teeth, --eye-brighten, --under-eye, --shine weights)",
               "      --no-effects        decode -> encode through the GPU with nothing applied",
               "                          (every preset field and flag: velvet presets knobs)"]
        return lines.joined(separator: "\n")
    }

    /// `  --flag VALUES   help, range` for a knob that has a flag.
    private static func flagLine(_ knob: Knob<BeautyPreset>) -> String? {
        guard let flag = knob.flag else { return nil }
        let head, text: String
        switch knob.values {
        case .number(let range):
            head = "      \(flag) X"
            text = "\(KnobTable.number(range.lowerBound))-\(KnobTable.number(range.upperBound)): " + knob.help
        case .choice(let names):
            (head, text) = ("      \(flag) \(names.joined(separator: "|"))", knob.help)
        case .colour:
            (head, text) = ("      \(flag) #RRGGBB", knob.help)
        }
        let column = 26, width = 96
        var lines = [head.count < column ? head.padding(toLength: column, withPad: " ", startingAt: 0) : head + "\n" + String(repeating: " ", count: column)]
        for word in text.split(separator: " ") {
            let last = lines[lines.count - 1]
            let lineLength = last.split(separator: "\n").last.map(\.count) ?? 0
            if lineLength > column, lineLength + 1 + word.count > width {
                lines.append(String(repeating: " ", count: column) + word)
            } else {
                lines[lines.count - 1] += (lineLength > column ? " " : "") + word
            }
        }
        return lines.joined(separator: "\n")
    }

    /// A preset named on the command line (`PresetStore.resolve`): a name no preset can have is a
    /// usage error, as `presets save` and `delete` say, not a missing preset.
    static func preset(named text: String, store: PresetStore) throws -> BeautyPreset {
        if !PresetStore.isFileReference(text), BeautyPreset.builtIn(text) == nil, !PresetStore.isValidName(text) {
            throw UsageError("\(text) is \(PresetStore.nameRule)")
        }
        return try store.resolve(text)
    }

    /// The preset named by `--preset` (a name or a preset file, `PresetStore.resolve`), else the
    /// user's default, else `natural`.
    static func basePreset(_ arguments: inout ArgumentParser, store: PresetStore) throws -> BeautyPreset {
        if let name = arguments.value("--preset") {
            guard !name.isEmpty else { throw UsageError("--preset needs a preset name or file, got ''") }
            return try preset(named: name, store: store)
        }
        guard let (name, preset) = try store.defaultPreset() else { return .shippedDefault }
        // Said here, where it is known to be the default: the LUT is read only when the GPU is up.
        if case .file(let lut) = preset.lut.source, !FileManager.default.fileExists(atPath: lut) {
            throw PresetError(file: name, reason: "its LUT file \(lut) is missing (it is the default preset: velvet presets default NAME|--clear changes it)")
        }
        return preset
    }

    /// The user's default preset (else `natural`) as render options, with `smoothing` set.
    static func defaultOptions(smoothing: BeautySettings.Smoothing, context: GPUContext) throws -> BeautyOptions {
        var preset = try PresetStore.standard().defaultPreset()?.preset ?? .shippedDefault
        preset.skin.smoothing = smoothing
        return try BeautyOptions(preset: preset) { try LUTLoader.load($0, context: context) }
    }

    /// Writes every beauty flag present onto `preset`.
    static func apply(_ arguments: inout ArgumentParser, to preset: inout BeautyPreset) throws {
        if let lut = arguments.value("--lut") {
            guard !lut.isEmpty else { throw UsageError("--lut needs a built-in LUT name or a .cube/.png file, got ''") }
            preset.lut.source = BuiltInLUT(rawValue: lut).map { .builtIn($0) } ?? .file(lut)
            preset.lut.strength = 1
        }
        for knob in BeautyPreset.knobs {
            guard let flag = knob.flag, let text = arguments.value(flag) else { continue }
            let value: KnobValue
            switch knob.values {
            case .number(let range):
                guard let number = Float(text), range.contains(number) else {
                    throw UsageError("\(flag) must be a number in \(range.lowerBound)...\(range.upperBound), got '\(text)'")
                }
                value = .number(number)
            case .choice, .colour:
                value = .text(text)
            }
            do throws(KnobError) {
                try knob.set(value, in: &preset)
            } catch {
                throw UsageError("\(flag): \(error.reason)")
            }
        }
    }

    /// The options for a render: nil with `--no-effects`.
    static func parse(_ arguments: inout ArgumentParser, store: PresetStore,
                      loadLUT: (String) throws -> ColorLUT) throws -> BeautyOptions? {
        try parseRequest(&arguments, store: store)?.options(loadLUT: loadLUT)
    }

    /// The options that only mean something with effects on.
    static var effectOptions: [String] {
        ["--preset", "--lut", "--detector", "--max-faces", "--faces", "--look-ahead", "--debug-view"]
            + BeautyPreset.knobs.compactMap(\.flag)
    }

    /// What the command line asks for, checked but with no file loaded yet: nil with `--no-effects`.
    static func parseRequest(_ arguments: inout ArgumentParser, store: PresetStore) throws -> BeautyRequest? {
        if arguments.flag("--no-effects") {
            if let option = effectOptions.first(where: { arguments.has(option: $0) }) {
                throw UsageError("\(option) sets an effect, and --no-effects renders none: give one or the other")
            }
            return nil
        }
        let presetText = arguments.peek("--preset")
        var request = BeautyRequest(preset: try basePreset(&arguments, store: store))
        request.presetText = presetText
        let asksForLUT = arguments.has(option: "--lut")
        try apply(&arguments, to: &request.preset)
        try request.preset.validate(file: "command line")
        if asksForLUT, let warning = request.preset.idleSkinGradeWarning { printError("velvet: warning: \(warning)") }
        request.trackingOptions = ["--detector", "--max-faces", "--look-ahead"].filter { arguments.has(option: $0) }
        if let detector = arguments.value("--detector") {
            guard let choice = DetectorChoice(rawValue: detector) else { throw UsageError("--detector takes short, full or auto") }
            request.detector = choice
        }
        request.maxFaces = try arguments.int("--max-faces", default: request.maxFaces, range: FaceTrackerOptions.maxFacesRange)
        if let text = arguments.value("--faces") {
            guard let selection = FaceSelection(text) else {
                throw UsageError("--faces takes all, largest or track IDs as velvet analyze reports them (1,3), got '\(text)'")
            }
            request.faces = selection
        }
        if arguments.has(option: "--look-ahead") {
            request.lookAhead = try arguments.int("--look-ahead", default: LookAheadTracker.standardFrames,
                                                  range: LookAheadTracker.framesRange)
        }
        if let view = arguments.value("--debug-view") {
            guard let debug = BeautyOptions.DebugView(rawValue: view) else { throw UsageError("--debug-view takes mask, zones, spots, landmarks, teeth, eyes, under-eye or shine") }
            request.debugView = debug
        }
        return request
    }
}

/// The beauty settings of one command line: the preset with every flag applied, and the
/// tracker and debug choices.
struct BeautyRequest {
    var preset: BeautyPreset
    var detector = DetectorChoice.auto
    var maxFaces = BeautyOptions().maxFaces
    var faces = FaceSelection.all
    var debugView: BeautyOptions.DebugView?
    /// `--look-ahead`; nil: the default (`LookAheadTracker.standardFrames`, 0 from standard input).
    var lookAhead: Int?
    /// The options given that choose how faces are tracked (none applies to a track file's faces).
    var trackingOptions: [String] = []
    /// `--preset` as given (a name or a file).
    var presetText: String?

    /// The look-ahead a render of `input` runs with.
    func lookAhead(input: String) -> Int {
        lookAhead ?? (input == CommandFiles.standardStream ? 0 : LookAheadTracker.standardFrames)
    }

    func options(loadLUT: (String) throws -> ColorLUT) throws -> BeautyOptions {
        var options = try BeautyOptions(preset: preset, loadLUT: loadLUT)
        options.detector = detector
        options.maxFaces = maxFaces
        options.faces = faces
        options.debugView = debugView
        options.lookAhead = lookAhead ?? LookAheadTracker.standardFrames
        return options
    }

    /// Text that differs whenever the result would (a LUT file by its contents).
    func fingerprint() throws -> String {
        var text = String(decoding: try preset.encoded(), as: UTF8.self)
        text += "\ndetector=\(detector.rawValue) max-faces=\(maxFaces) debug-view=\(debugView?.rawValue ?? "-")"
            + " look-ahead=\(lookAhead.map(String.init) ?? "default")"
            + (faces == .all ? "" : " faces=\(faces)") // absent for all: records made before --faces stay valid
        if case .file(let path) = preset.lut.source {
            var hash = FNV1a()
            hash.update(FileManager.default.contents(atPath: path) ?? Data())
            text += "\nlut-file=\(hash.hex)"
        }
        return text
    }
}

extension BeautyPreset {
    /// A LUT on the skin is weighted by the skin stages' blend weight, which no skin mask is
    /// drawn for when every face's smoothing and spot removal are 0: such a grade changes
    /// nothing, which is worth a word.
    var idleSkinGradeWarning: String? {
        let faces = [self] + (othersPreset.map { [$0] } ?? [])
        guard !lut.isIdentity, lut.scope == .skin, faces.allSatisfy({ $0.skin.strength == 0 && $0.skin.spotRemoval == 0 }) else { return nil }
        return "the LUT is applied through the skin's blend weight, and with --strength 0 and --spots 0 there is none: "
            + "nothing is graded (--lut-on frame grades the whole frame)"
    }
}
