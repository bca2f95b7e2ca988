import Foundation
import VelvetFace
import VelvetBeauty
import VelvetFiles
import VelvetGPU
import VelvetMedia
import VelvetPipeline

/// `velvet compare INPUT [--a bilateral | --a-preset P] [--b freqsep | --b-preset P] -o ab.mp4
/// [--report ab.html] [--metrics ab.json]`: the A/B tool, of two smoothing methods (the skin
/// stages) or of two presets (every stage). A split video (A left, B right, labelled), the
/// quality metrics M4-M8 on the first frame with a face, M15 over every frame, and
/// per-stage GPU time of each side, and a self-contained HTML
/// report (both results with synchronized zoomed crops, difference heat maps, masks, the
/// metrics table and timing bars) built from the first frame with a face.
enum CompareCommand {
    static func run(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        guard let input = arguments.takePositional() else { throw UsageError("compare needs an INPUT file") }
        try SequenceArguments.parse(&arguments, input: input)
        guard let output = arguments.value("-o", or: "--output") else { throw UsageError("compare needs -o OUTPUT") }
        let choiceA = try SideChoice.parse(&arguments, side: "a", method: "bilateral")
        let choiceB = try SideChoice.parse(&arguments, side: "b", method: "freqsep")
        let named = ImageSequence.isPattern(output) ? ImageSequence.stem(of: output) : output
        let report = arguments.value("--report") ?? (URL(fileURLWithPath: named).deletingPathExtension().path + ".html")
        let givenMetrics = arguments.value("--metrics")
        let metricsPath = givenMetrics ?? (URL(fileURLWithPath: report).deletingPathExtension().path + ".json")
        let settings = try RenderCommand.encoderSettings(&arguments)
        let policy = try OverwritePolicy.parse(&arguments)
        let quiet = arguments.flag("--quiet")
        let allowTruncated = arguments.flag("--allow-truncated")
        let request = arguments.value("--device")
        let store = PresetStore.standard()
        let presetText = arguments.peek("--preset")
        // Two named sides use no base preset: the default is not even read (a broken one would fail the run).
        let bothSidesNamed = choiceA.preset != nil && choiceB.preset != nil && presetText == nil
        var preset = bothSidesNamed ? BeautyPreset.shippedDefault : try BeautyArguments.basePreset(&arguments, store: store)
        let flags = arguments // the beauty flags, written over the base preset and over each side's preset
        try BeautyArguments.apply(&arguments, to: &preset)
        try arguments.finish()
        var sidePresets: [String: BeautyPreset] = [:]
        for name in [choiceA.preset, choiceB.preset].compactMap({ $0 }) where sidePresets[name] == nil {
            var sideFlags = flags, sidePreset = try BeautyArguments.preset(named: name, store: store)
            try BeautyArguments.apply(&sideFlags, to: &sidePreset)
            try sidePreset.validate(file: name)
            sidePresets[name] = sidePreset
        }
        try CommandFiles.checkEncoder(output, settings, streams: false)
        var files = CommandFiles(policy: policy)
        files.input(input)
        files.presetFiles(given: presetText, preset: preset)
        for (name, sidePreset) in sidePresets { files.presetFiles(given: name, preset: sidePreset) }
        files.output(output, "-o")
        files.output(report, "--report")
        files.output(metricsPath, givenMetrics != nil ? "--metrics" : "the metrics file (the report's name with .json)")
        // The device first: a --device that names none is a usage error, found before any file is checked.
        let context = try GPUContext(request: request)
        try files.check()

        // Two methods compare the skin stages; a preset on either side makes both sides whole renders.
        let wholeRenders = choiceA.preset != nil || choiceB.preset != nil
        let sides = try [choiceA, choiceB].map { choice in
            var sidePreset = choice.preset.map { sidePresets[$0]! } ?? preset
            if let method = choice.method { sidePreset.skin.smoothing = method }
            let label = choice.preset.map { "\($0) (\(sidePreset.skin.smoothing.rawValue))" } ?? sidePreset.skin.smoothing.rawValue
            let side = wholeRenders ? try BeautyOptions(preset: sidePreset) { try LUTLoader.load($0, context: context) }
                : try BeautyOptions.skinOnly(sidePreset.skinSettings())
            return (label: label, method: sidePreset.skin.smoothing.rawValue, preset: choice.preset, side: side)
        }
        let effect = try CompareEffect(context: context, a: sides[0].side, b: sides[1].side,
                                       lookAhead: input == CommandFiles.standardStream ? 0 : LookAheadTracker.standardFrames)
        // The metrics and the report are made once the A/B video is finished and moved into place
        // with it, all three or none (a full disk used to leave the video and the metrics alone).
        let sidecars = CompareSidecars()
        sidecars.prepare = {
            guard let capture = effect.capture, let face = capture.faces.first else {
                // No face: the video alone, and with -y no report or metrics of an earlier run beside it.
                if policy.commit.replacesExisting { sidecars.stale = [report, metricsPath] }
                return []
            }
            effect.finishMeasuring()
            let names = (sides[0].label, sides[1].label)
            let stability = [effect.stabilityA.result, effect.stabilityB.result]
            // Every face of the captured frame is measured; a side's figure is its worst face's.
            let perFace = [capture.a, capture.b].map { image in
                capture.faces.map { CompareFaceMetrics(input: capture.input, output: image, face: $0, personMask: capture.personMask) }
            }
            let metrics = zip(zip(["A", "B"], perFace), stability).map { sideFaces, m15 in
                let (side, faces) = sideFaces
                return (side, CompareFaceMetrics.worst(of: faces).merging([
                    "M15a_still_change_levels": m15.largestChangeOnStill.map(Double.init),
                    "M15b_change_ratio": m15.changeRatio,
                    "M15c_frames_without_beauty": Double(m15.framesWithoutBeauty),
                ] as [String: Double?]) { $1 })
            }
            let frames = Double(max(effect.frames, 1))
            let timings = [effect.timingsA, effect.timingsB].map { $0.mapValues { $0 / frames } }

            var json: [String: Any] = ["input": input, "output": output, "frames": effect.frames, "captured_frame": capture.frameIndex,
                                       "device": context.device.name]
            for (index, (side, values)) in metrics.enumerated() {
                var entry: [String: Any] = ["method": sides[index].method,
                                            "metrics": values.mapValues { value -> Any in value.map { $0 as Any } ?? NSNull() },
                                            "faces": perFace[index].map { $0.json },
                                            "gpu_ms_per_frame": timings[index],
                                            "M15_frames": ["still": stability[index].stillFrames, "with_face": stability[index].framesWithFace,
                                                           "all": stability[index].frames]]
                if let name = sides[index].preset { entry["preset"] = name }
                json[side] = entry
            }
            let html = try CompareReport(context: context, capture: capture, face: face, names: names, metrics: metrics.map(\.1),
                                         timings: timings, input: input, frames: effect.frames).html()
            let metricsFile = try OutputFile.prepared(try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys]),
                                                      to: metricsPath, policy: policy.commit)
            let reportFile = try OutputFile.prepared(Data(html.utf8), to: report, policy: policy.commit)
            return [metricsFile, reportFile]
        }
        // Made before the commit lock (the report's pictures are GPU work), moved into place under it.
        let commit = CommitPolicy(replacesExisting: policy.commit.replacesExisting, prepare: { try sidecars.make() },
                                  beforeRename: { _ in try sidecars.commit() })
        let summary = try VideoRenderer(context: context).render(input: input, output: output, settings: settings,
                                                                 options: RenderOptions(allowTruncated: allowTruncated), effect: effect,
                                                                 progress: ProgressReporter(quiet: quiet), commit: commit)
        for warning in summary.warnings { printError("velvet: warning: \(warning)") }
        guard effect.capture?.faces.first != nil else {
            let removed = sidecars.removed.isEmpty ? "" : "; \(sidecars.removed.joined(separator: " and ")) of an earlier run removed"
            throw MediaError.refused(path: input, reason: "no face was found, so there is nothing to compare (the A/B video was written\(removed))")
        }
        try ValidationReport.check(context)
        print("A/B video: \(output)\nreport: \(report)\nmetrics: \(metricsPath)")
    }

    static func method(_ name: String, _ flag: String) throws -> BeautySettings.Smoothing {
        switch name {
        case "bilateral": return .bilateral
        case "freqsep", "frequency-separation": return .frequencySeparation
        default: throw UsageError("\(flag) takes bilateral or freqsep")
        }
    }
}

/// What the command line asks for one side: a smoothing method (`--a`), a preset (`--a-preset`),
/// or neither (the side's default method).
private struct SideChoice {
    var method: BeautySettings.Smoothing?
    var preset: String?

    static func parse(_ arguments: inout ArgumentParser, side: String, method fallback: String) throws -> SideChoice {
        let method = arguments.value("--\(side)"), preset = arguments.value("--\(side)-preset")
        if method != nil, preset != nil {
            throw UsageError("--\(side) and --\(side)-preset both set side \(side.uppercased()): give one")
        }
        if let preset { return SideChoice(method: nil, preset: preset) }
        return SideChoice(method: try CompareCommand.method(method ?? fallback, "--\(side)"), preset: nil)
    }
}

/// What `compare` writes beside its video: made when the video is finished
/// (`CommitPolicy.prepare`), moved into place in its commit (`CommitPolicy.beforeRename`).
private final class CompareSidecars: @unchecked Sendable {
    var prepare: (() throws -> [OutputFile])?
    private var files: [OutputFile] = []
    /// Report and metrics paths whose earlier files go with the video that replaces theirs.
    var stale: [String] = []
    private(set) var removed: [String] = []

    func make() throws { files = try prepare?() ?? [] }

    func commit() throws {
        for file in files { try file.commit() }
        for path in stale where OutputFile.removeReplaced(path) { removed.append(path) }
    }
}

/// The still metrics of one face of the captured frame (quality-metrics.md M4–M8).
struct CompareFaceMetrics {
    let values: [String: Double?]

    init(input: RGBImage, output: RGBImage, face: BeautyFace, personMask: PlaneImage) {
        values = [
            "M4_features_ssim": QualityMetrics.featureSSIM(input: input, output: output, face: face),
            "M5_mid_band_ratio": QualityMetrics.midBandRatio(input: input, output: output, face: face),
            "M6_fine_band_ratio": QualityMetrics.fineBandRatio(input: input, output: output, face: face),
            "M7_halo_p99": QualityMetrics.halo(input: input, output: output, face: face, personMask: personMask)?.value,
            "M8_colour_shift_de2000": QualityMetrics.colourShift(input: input, output: output, face: face),
        ]
    }

    var json: [String: Any] { values.mapValues { value -> Any in value.map { $0 as Any } ?? NSNull() } }

    /// The bars hold on every face: the lowest M4 and M6, the highest M5, M7 and M8 (a face
    /// where one cannot be computed is left out of that one; null where no face has it).
    static func worst(of faces: [CompareFaceMetrics]) -> [String: Double?] {
        let lowestIsWorst: Set = ["M4_features_ssim", "M6_fine_band_ratio"]
        let keys = Set(faces.flatMap(\.values.keys))
        return Dictionary(uniqueKeysWithValues: keys.map { key in
            let known = faces.compactMap { $0.values[key] ?? nil }
            return (key, lowestIsWorst.contains(key) ? known.min() : known.max())
        })
    }
}
