import Foundation
import VelvetGPU
import VelvetMedia
import VelvetBeauty
import VelvetPipeline

/// `velvet render INPUT -o OUTPUT`: decode -> track faces -> beauty on the GPU -> encode.
enum RenderCommand {
    static func run(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        guard let input = arguments.takePositional() else { throw UsageError("render needs an INPUT file") }
        try SequenceArguments.parse(&arguments, input: input)
        guard let output = arguments.value("-o", or: "--output") else { throw UsageError("render needs -o OUTPUT") }
        let settings = try encoderSettings(&arguments)
        let policy = try OverwritePolicy.parse(&arguments)
        let renderOptions = try Self.renderOptions(&arguments)
        let quiet = arguments.flag("--quiet")
        let json = arguments.flag("--json")
        let request = arguments.value("--device")
        let beauty = try BeautyArguments.parseRequest(&arguments, store: .standard())
        let sidecarArguments = SidecarArguments.parse(&arguments)
        try arguments.finish()
        if json && output == CommandFiles.standardStream {
            throw UsageError("--json prints to standard output, which -o - fills with the video; drop --json or write a file")
        }
        try CommandFiles.checkEncoder(output, settings)
        if let frame = renderOptions.stillFrame, !EncoderCheck.writesOnePicture(output: output, settings: settings) {
            throw UsageError("--frame \(frame) picks the frame of a still output (.png, .jpg); \(output) is \(ImageSequence.isPattern(output) ? "an image sequence" : "a video")")
        }
        try sidecarArguments.check(input: input, output: output, beauty: beauty)
        var files = CommandFiles(policy: policy, streams: true)
        files.input(input)
        if let beauty {
            files.presetFiles(given: beauty.presetText, preset: beauty.preset)
            files.modelFiles(nil)
        }
        files.output(output, "-o")
        sidecarArguments.add(to: &files)
        // The device first: a --device that names none is a usage error, found before any file is checked.
        let context = try GPUContext(request: request)
        try files.check()
        if json { try files.checkSummaryDestination() }

        let sidecars = try sidecarArguments.open(input: input, context: context, stillFrame: renderOptions.stillFrame, faces: beauty?.faces ?? .all,
                                                 commit: policy.commit)
        let effect = try beauty.map { request in
            var options = try request.options { try LUTLoader.load($0, context: context) }
            options.measuresQuality = json
            options.lookAhead = request.lookAhead(input: input)
            return try BeautyEffect(context: context, options: options, sidecars: sidecars)
        }
        let commit = sidecarArguments.commit(policy.commit, effect: effect)
        let renderer = try VideoRenderer(context: context)
        let summary = try renderer.render(input: input, output: output, settings: settings, options: renderOptions, effect: effect,
                                          progress: ProgressReporter(quiet: quiet), commit: commit)
        for warning in summary.warnings { printError("velvet: warning: \(warning)") }
        if json {
            effect?.finishMeasuring()
            // The frames held ahead: the tracker's look-ahead, and the skin fronts' lead after it.
            let trackerFrames = summary.lookAhead > 0 ? min(summary.lookAhead, effect?.trackerLookAhead ?? summary.lookAhead) : 0
            var stages = summary.gpuMilliseconds
            effect?.stageMilliseconds.forEach { stages[$0.key, default: 0] += $0.value }
            let report: [String: Any] = [
                "input": input, "output": output, "frames": summary.frames, "seconds": summary.seconds,
                "fps": summary.framesPerSecond, "gpu_ms": stages, "device": context.device.name,
                "device_kind": context.device.kind.rawValue,
                "gpu_ms_per_frame": stages.mapValues { $0 / Double(max(summary.frames, 1)) },
                "faces": FaceRuns.describe(effect?.facesPerFrame ?? []),
                "skin_quality": SkinQualityReport.describe(effect?.skinQuality ?? [:]),
                "look_ahead": ["frames": trackerFrames, "skin_lead": summary.lookAhead - trackerFrames,
                               "held_bytes_peak": summary.lookAheadPeakBytes],
            ]
            let data = try JSONSerialization.data(withJSONObject: report, options: [.prettyPrinted, .sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        }
        try ValidationReport.check(context)
    }

    /// `--allow-truncated` and `--frame N`.
    static func renderOptions(_ arguments: inout ArgumentParser) throws -> RenderOptions {
        var options = RenderOptions(allowTruncated: arguments.flag("--allow-truncated"))
        options.takesFrameChoice = true
        if let text = arguments.value("--frame") {
            guard let frame = Int(text), frame >= 0 else { throw UsageError("--frame must be an integer of 0 or more, got '\(text)'") }
            options.stillFrame = frame
        }
        return options
    }

    /// `--codec`, `--encoder-opt`, `--format`, `--crf`, `--preset-x264`, `--pix-fmt` (names
    /// FFmpeg knows; whether the encoder and container take them is `CommandFiles.checkEncoder`'s).
    static func encoderSettings(_ arguments: inout ArgumentParser) throws -> EncoderSettings {
        var settings = EncoderSettings()
        settings.codec = arguments.value("--codec")
        settings.format = arguments.value("--format")
        settings.encoderOptions = try arguments.values("--encoder-opt").map { pair in
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw UsageError("--encoder-opt takes KEY=VALUE, got '\(pair)'")
            }
            return EncoderSettings.Option(key: String(pair[..<equals]), value: String(pair[pair.index(after: equals)...]))
        }
        if let codec = settings.codec, !EncoderSettings.x26xEncoders.contains(EncoderSettings.aliases[codec] ?? codec),
           let tuned = ["--crf", "--preset-x264"].first(where: { arguments.has(option: $0) }) {
            throw UsageError("\(tuned) tunes libx264 and libx265; for \(codec) use --encoder-opt (ffmpeg -h encoder=\(codec))")
        }
        settings.crf = try arguments.int("--crf", default: settings.crf, range: 0...51)
        if let preset = arguments.value("--preset-x264") {
            guard EncoderSettings.presets.contains(preset) else {
                throw UsageError("--preset-x264 takes one of \(EncoderSettings.presets.joined(separator: ", "))")
            }
            settings.preset = preset
        }
        if let format = arguments.value("--pix-fmt") {
            guard EncoderCheck.isPixelFormat(format) else {
                throw UsageError("--pix-fmt: unknown pixel format '\(format)' (ffmpeg -pix_fmts lists them)")
            }
            settings.pixelFormat = format
        }
        return settings
    }
}

/// Faces per frame as runs: [{"frames": "0-41", "faces": 1}, ...].
enum FaceRuns {
    static func describe(_ counts: [Int]) -> [[String: Any]] {
        var runs: [[String: Any]] = []
        var start = 0
        for index in counts.indices where index == counts.count - 1 || counts[index + 1] != counts[index] {
            runs.append(["frames": start == index ? "\(start)" : "\(start)-\(index)", "faces": counts[index]])
            start = index + 1
        }
        return runs
    }
}

/// What the skin stages achieved on each tracked face, over the frames it was treated in:
/// [{"track": 1, "frames": 68, "M5_mid_band_ratio": {"mean": .., "max": ..},
///   "M6_fine_band_ratio": {"mean": .., "min": ..}, "M8_colour_shift_de2000": {"mean": .., "max": ..}}].
enum SkinQualityReport {
    static func describe(_ quality: [Int: [FaceSkinQuality]]) -> [[String: Any]] {
        quality.keys.sorted().map { track in
            let frames = quality[track]!
            func summary(_ values: [Double], worst: ([Double]) -> Double?, _ worstName: String) -> Any {
                guard !values.isEmpty else { return NSNull() }
                return ["mean": values.reduce(0, +) / Double(values.count), worstName: worst(values) as Any]
            }
            return [
                "track": track, "frames": frames.count,
                "M5_mid_band_ratio": summary(frames.compactMap(\.midBandRatio), worst: { $0.max() }, "max"),
                "M6_fine_band_ratio": summary(frames.compactMap(\.fineBandRatio), worst: { $0.min() }, "min"),
                "M8_colour_shift_de2000": summary(frames.compactMap(\.colourShift), worst: { $0.max() }, "max"),
            ]
        }
    }
}
