import Foundation
import VelvetBeauty
import VelvetFace
import VelvetFiles
import VelvetGPU
import VelvetPipeline

/// The beauty options a user sets on the command line. Flags are written over a preset
/// (`--preset NAME`, else the default preset, else `natural`), so a flag always wins.
enum BeautyArguments {
    static let help = """
          --preset NAME       beauty preset: none, natural, soft, studio, glam or a saved one
                              (default: the one set with `velvet presets default`, else natural)
          --smoothing bilateral|freqsep   skin smoothing method
          --strength X        skin smoothing strength, 0-1: the share of each face's blotches removed
                              (0 turns smoothing off)
          --detail X          frequency separation: fine texture kept, 0-2
          --spots X           spot removal strength, 0-1
          --sharpen X         global sharpen after the composite, 0-2
          --lut NAME|FILE     colour grade: gentle-brighten, warm, cool, soft-matte, or a .cube / 512x512 .png LUT
          --lut-strength X    0-1 (default 1 with --lut)
          --lut-on skin|frame through the skin mask (default) or over the whole frame
          --lipstick X        lipstick strength 0-1; --lipstick-colour #RRGGBB; --lipstick-blend natural|multiply|soft-light
          --blush X           blush strength 0-1; --blush-colour #RRGGBB
          --eyes X            eye enlargement 0-1;  --slim X  face slimming 0-1
          --detector short|full|auto   face detector (default auto)
          --max-faces N       faces tracked, 1-64 (default 32; the largest are kept)
          --look-ahead K      video: track K frames ahead and smooth the landmarks over the frames
                              on both sides, filling short gaps; 0-30, 0 off (default 6 for files,
                              0 for standard input)
          --debug-view VIEW   render a view of the pipeline instead: mask (blend weight), zones
                              (zone map over the skin), spots (spot fills), landmarks (mesh)
          --no-effects        decode -> encode through the GPU with nothing applied
    """

    /// The preset named by `--preset`, else the user's default, else `natural`.
    static func basePreset(_ arguments: inout ArgumentParser, store: PresetStore) throws -> BeautyPreset {
        if let name = arguments.value("--preset") {
            if let builtIn = BeautyPreset.builtIn(name) { return builtIn }
            return try store.load(name)
        }
        return try store.defaultPreset()?.preset ?? .shippedDefault
    }

    /// The user's default preset (else `natural`) as render options, with `smoothing` set.
    static func defaultOptions(smoothing: BeautySettings.Smoothing, context: GPUContext) throws -> BeautyOptions {
        var preset = try PresetStore.standard().defaultPreset()?.preset ?? .shippedDefault
        preset.skin.smoothing = smoothing
        return try BeautyOptions(preset: preset) { try LUTLoader.load($0, context: context) }
    }

    /// Writes every beauty flag present onto `preset`.
    static func apply(_ arguments: inout ArgumentParser, to preset: inout BeautyPreset) throws {
        if let method = arguments.value("--smoothing") {
            switch method {
            case "bilateral": preset.skin.smoothing = .bilateral
            case "freqsep", "frequency-separation": preset.skin.smoothing = .frequencySeparation
            default: throw UsageError("--smoothing takes bilateral or freqsep")
            }
        }
        preset.skin.strength = try arguments.float("--strength", default: preset.skin.strength, range: 0...1)
        preset.skin.detail = try arguments.float("--detail", default: preset.skin.detail, range: 0...2)
        preset.skin.spotRemoval = try arguments.float("--spots", default: preset.skin.spotRemoval, range: 0...1)
        preset.skin.sharpen = try arguments.float("--sharpen", default: preset.skin.sharpen, range: 0...2)
        if let lut = arguments.value("--lut") {
            preset.lut.source = BuiltInLUT(rawValue: lut).map { .builtIn($0) } ?? .file(lut)
            preset.lut.strength = 1
        }
        preset.lut.strength = try arguments.float("--lut-strength", default: preset.lut.strength, range: 0...1)
        if let target = arguments.value("--lut-on") {
            guard let scope = BeautyPreset.LUT.Scope(rawValue: target) else { throw UsageError("--lut-on takes skin or frame") }
            preset.lut.scope = scope
        }
        preset.makeup.lipstick.strength = try arguments.float("--lipstick", default: preset.makeup.lipstick.strength, range: 0...1)
        preset.makeup.blush.strength = try arguments.float("--blush", default: preset.makeup.blush.strength, range: 0...1)
        if let colour = arguments.value("--lipstick-colour") { preset.makeup.lipstick.colour = try parseColour(colour, "--lipstick-colour") }
        if let colour = arguments.value("--blush-colour") { preset.makeup.blush.colour = try parseColour(colour, "--blush-colour") }
        if let blend = arguments.value("--lipstick-blend") {
            guard let value = MakeupSettings.LipBlend(rawValue: blend) else {
                throw UsageError("--lipstick-blend takes natural, multiply or soft-light")
            }
            preset.makeup.lipstick.blend = value
        }
        preset.reshape.eyes = try arguments.float("--eyes", default: preset.reshape.eyes, range: 0...1)
        preset.reshape.slim = try arguments.float("--slim", default: preset.reshape.slim, range: 0...1)
    }

    /// The options for a render: nil with `--no-effects`.
    static func parse(_ arguments: inout ArgumentParser, store: PresetStore,
                      loadLUT: (String) throws -> ColorLUT) throws -> BeautyOptions? {
        try parseRequest(&arguments, store: store)?.options(loadLUT: loadLUT)
    }

    /// What the command line asks for, checked but with no file loaded yet: nil with `--no-effects`.
    static func parseRequest(_ arguments: inout ArgumentParser, store: PresetStore) throws -> BeautyRequest? {
        if arguments.flag("--no-effects") { return nil }
        var request = BeautyRequest(preset: try basePreset(&arguments, store: store))
        try apply(&arguments, to: &request.preset)
        try request.preset.validate(file: "command line")
        if let detector = arguments.value("--detector") {
            guard let choice = DetectorChoice(rawValue: detector) else { throw UsageError("--detector takes short, full or auto") }
            request.detector = choice
        }
        request.maxFaces = try arguments.int("--max-faces", default: request.maxFaces, range: FaceTrackerOptions.maxFacesRange)
        if arguments.has(option: "--look-ahead") {
            request.lookAhead = try arguments.int("--look-ahead", default: LookAheadTracker.standardFrames,
                                                  range: LookAheadTracker.framesRange)
        }
        if let view = arguments.value("--debug-view") {
            guard let debug = BeautyOptions.DebugView(rawValue: view) else { throw UsageError("--debug-view takes mask, zones, spots or landmarks") }
            request.debugView = debug
        }
        return request
    }

    private static func parseColour(_ text: String, _ flag: String) throws -> RGBColour {
        guard let colour = RGBColour(hex: text) else { throw UsageError("\(flag) takes a colour as #RRGGBB, got '\(text)'") }
        return colour
    }
}

/// The beauty settings of one command line: the preset with every flag applied, and the
/// tracker and debug choices.
struct BeautyRequest {
    var preset: BeautyPreset
    var detector = DetectorChoice.auto
    var maxFaces = BeautyOptions().maxFaces
    var debugView: BeautyOptions.DebugView?
    /// `--look-ahead`; nil: the default (`LookAheadTracker.standardFrames`, 0 from standard input).
    var lookAhead: Int?

    /// The look-ahead a render of `input` runs with.
    func lookAhead(input: String) -> Int {
        lookAhead ?? (input == CommandFiles.standardStream ? 0 : LookAheadTracker.standardFrames)
    }

    func options(loadLUT: (String) throws -> ColorLUT) throws -> BeautyOptions {
        var options = try BeautyOptions(preset: preset, loadLUT: loadLUT)
        options.detector = detector
        options.maxFaces = maxFaces
        options.debugView = debugView
        options.lookAhead = lookAhead ?? LookAheadTracker.standardFrames
        return options
    }

    /// Text that differs whenever the result would (a LUT file by its contents).
    func fingerprint() throws -> String {
        var text = String(decoding: try preset.encoded(), as: UTF8.self)
        text += "\ndetector=\(detector.rawValue) max-faces=\(maxFaces) debug-view=\(debugView?.rawValue ?? "-")"
            + " look-ahead=\(lookAhead.map(String.init) ?? "default")"
        if case .file(let path) = preset.lut.source {
            var hash = FNV1a()
            hash.update(FileManager.default.contents(atPath: path) ?? Data())
            text += "\nlut-file=\(hash.hex)"
        }
        return text
    }
}
