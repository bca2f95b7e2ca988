import Foundation
import VelvetFace
import VelvetFiles
import VelvetGPU
import VelvetMedia
import VelvetBeauty
import VelvetPipeline

/// `velvet bench media`: passthrough (decode -> GPU -> encode, effects off) against a plain
/// transcode (decode -> encode through the same FFmpeg libraries and settings, no GPU) on
/// the same clip in the same run, plus the ffmpeg CLI when it is installed. Prints a table.
enum MediaBenchmark {
    static func run(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        let photo = arguments.value("--photo") ?? "test-assets/grace_hopper.jpg"
        let beauty = arguments.flag("--beauty")
        let frames = try arguments.int("--frames", default: 300, range: 1...100_000)
        let size = try parseSize(arguments.value("--size") ?? "1920x1080")
        let settings = try RenderCommand.encoderSettings(&arguments)
        let workDir = arguments.value("--work-dir")
        try CommandFiles.refuseStandardStream(workDir, option: "--work-dir")
        let request = arguments.value("--device")
        let repeats = try arguments.int("--repeats", default: 1, range: 1...20)
        let json = arguments.flag("--json")
        try arguments.finish()
        let directory = try BenchWorkDirectory.resolve(workDir)
        // The renders' files are named for what they hold (`--format nut`, `--codec ffv1`: not .mp4).
        func output(_ name: String) -> String { directory + "/velvet-bench-\(name).\(EncoderCheck.videoExtension(settings))" }
        try CommandFiles.checkEncoder(output("gpu"), settings)
        let name = URL(fileURLWithPath: photo).deletingPathExtension().lastPathComponent + "-" + (try FaceClip.tag(of: photo))
        let clip = directory + "/velvet-bench-\(name)-\(size.width)x\(size.height)-\(frames).mp4"
        let warmUp = directory + "/velvet-bench-warm-up-\(name)-\(size.width)x\(size.height).mp4"
        try CommandFiles.checkScratch(photo: photo, [clip, warmUp] + ["plain", "gpu", "beauty", "cli"].map(output))

        let context = try GPUContext(request: request)
        // A slow pan and zoom with noise, so the encoder has real work.
        var clipSettings = EncoderSettings()
        clipSettings.crf = 16
        clipSettings.preset = "veryfast"
        try FaceClip.make(clip, photo: photo, size: size, frames: frames, noise: 2 / 255, settings: clipSettings,
                          context: context) { index, fill in
            let t = Double(index) / Double(max(frames - 1, 1))
            return SimilarityTransform(scale: fill * (1 + 0.05 * t), rotation: 0,
                                       translation: (x: 20 * t, y: Double(size.height) * 0.3 - 10 * t))
        }
        let renderer = try VideoRenderer(context: context)
        if beauty {
            // Untimed: a short render with each method first, so that no timed render compiles
            // the pipelines or fills the driver's caches (a cold start is Tools/bench-cold-start.sh's).
            try FaceClip.make(warmUp, photo: photo, size: size, frames: Self.warmUpFrames, noise: 2 / 255, settings: clipSettings,
                              context: context) { _, fill in
                SimilarityTransform(scale: fill, rotation: 0, translation: (x: 0, y: Double(size.height) * 0.3))
            }
            for smoothing in [BeautySettings.Smoothing.frequencySeparation, .bilateral] {
                let effect = try BeautyEffect(context: context, options: try BeautyArguments.defaultOptions(smoothing: smoothing, context: context))
                _ = try DamagedKeptClip.naming([warmUp]) {
                    try renderer.render(input: warmUp, output: output("beauty"), settings: settings, effect: effect)
                }
            }
        }
        var rows: [Row] = []
        /// Per pipeline: ms per frame each render thread was busy, and the CPU ms per frame of
        /// those threads and of the whole process (the last repeat's).
        var busy: [String: [String: Double]] = [:]
        var cpu: [String: [String: Double]] = [:]
        func note(_ key: String, _ summary: RenderSummary) {
            let perFrame = 1000 / Double(max(summary.frames, 1))
            let (wall, used) = (summary.busySeconds, summary.cpuSeconds)
            busy[key] = ["decode": wall.decode * perFrame, "gpu": wall.gpu * perFrame, "encode": wall.encode * perFrame,
                         "look_ahead": wall.lookAhead * perFrame]
            cpu[key] = ["decode": used.decode * perFrame, "gpu": used.gpu * perFrame, "encode": used.encode * perFrame,
                        "look_ahead": used.lookAhead * perFrame, "process": used.process * perFrame]
        }
        var stageTimes: [(String, [String: Double], Int)] = []
        for _ in 0..<repeats {
            let plain = try DamagedKeptClip.naming([clip]) {
                try renderer.render(input: clip, output: output("plain"), settings: settings, cpuOnly: true)
            }
            let gpu = try renderer.render(input: clip, output: output("gpu"), settings: settings)
            rows.append(Row("plain transcode (libavcodec + \(settings.encoderName(forMuxer: "mp4")), no GPU)", plain))
            rows.append(Row("Velvet passthrough (decode -> GPU -> encode)", gpu))
            note("plain", plain)
            note("passthrough", gpu)
            if beauty {
                for smoothing in [BeautySettings.Smoothing.frequencySeparation, .bilateral] {
                    let options = try BeautyArguments.defaultOptions(smoothing: smoothing, context: context)
                    let effect = try BeautyEffect(context: context, options: options)
                    let rendered = try renderer.render(input: clip, output: output("beauty"),
                                                       settings: settings, effect: effect)
                    let faces = effect.facesPerFrame.filter { $0 > 0 }.count
                    note(smoothing.rawValue, rendered)
                    rows.append(Row("Velvet beauty, \(smoothing.rawValue) (faces in \(faces)/\(rendered.frames) frames)", rendered))
                    stageTimes.append((smoothing.rawValue, rendered.gpuMilliseconds.merging(effect.stageMilliseconds, uniquingKeysWith: +),
                                       rendered.frames))
                }
            }
            if let cli = try ffmpegCLI(clip: clip, output: output("cli"), settings: settings) {
                rows.append(Row(name: "ffmpeg CLI transcode", fps: Double(frames) / cli))
            }
        }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        if json {
            printJSON(rows: rows, stageTimes: stageTimes, busy: busy, cpu: cpu, clip: clip, size: size, frames: frames,
                      settings: settings, device: context.device.name, cores: cores)
        } else {
            printTable(rows: rows, stageTimes: stageTimes, busy: busy, cpu: cpu, size: size, frames: frames, settings: settings,
                       device: context.device.name, cores: cores, repeats: repeats)
        }
        try ValidationReport.check(context)
    }

    /// Frames of the untimed warm-up render before the timed beauty renders.
    static let warmUpFrames = 8

    /// One timed render: frames a second over the whole render, and apart its start-up (to the
    /// first frame handed to the encoder) and its steady state (the frames after the first).
    struct Row {
        var name: String
        var fps: Double
        var firstFrameMilliseconds: Double?
        var steadyFPS: Double?

        init(name: String, fps: Double) { (self.name, self.fps) = (name, fps) }
        init(_ name: String, _ summary: RenderSummary) {
            (self.name, fps) = (name, summary.framesPerSecond)
            (firstFrameMilliseconds, steadyFPS) = (summary.firstFrameSeconds * 1000, summary.steadyFramesPerSecond)
        }
    }

    private static func printTable(rows: [Row], stageTimes: [(String, [String: Double], Int)],
                                   busy: [String: [String: Double]], cpu: [String: [String: Double]],
                                   size: (width: Int, height: Int), frames: Int,
                                   settings: EncoderSettings, device: String, cores: Int, repeats: Int) {
        print("Media passthrough, \(size.width)x\(size.height), \(frames) frames, \(settings.encoderName(forMuxer: "mp4")) crf \(settings.crf) preset \(settings.preset), "
              + "\(device), \(cores) CPU cores" + (stageTimes.isEmpty ? "" : "; each method rendered \(warmUpFrames) frames first, untimed") + "\n")
        print("| pipeline | fps | first frame out, ms | steady fps (after the first frame) |")
        print("|---|---:|---:|---:|")
        func figure(_ value: Double?, _ format: String) -> String { value.map { String(format: format, $0) } ?? "—" }
        for row in rows {
            print("| \(row.name) | \(String(format: "%.1f", row.fps)) | \(figure(row.firstFrameMilliseconds, "%.1f")) | \(figure(row.steadyFPS, "%.1f")) |")
        }
        func best(_ matching: (String) -> Bool, _ value: (Row) -> Double?) -> Double {
            rows.filter { matching($0.name) }.compactMap(value).max() ?? 0
        }
        let plainBest = best({ $0.hasPrefix("plain") }, { $0.fps })
        let gpuBest = best({ $0.hasPrefix("Velvet") }, { $0.fps })
        let plainSteady = best({ $0.hasPrefix("plain") }, { $0.steadyFPS })
        print("\npassthrough / plain transcode = \(String(format: "%.2f", gpuBest / plainBest))x (best of \(repeats))")
        func line(_ times: [String: Double]?) -> String {
            (times ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \(String(format: "%.2f", $0.value))" }.joined(separator: ", ")
        }
        print("  CPU ms per frame (plain): " + line(cpu["plain"]))
        print("  CPU ms per frame (passthrough): " + line(cpu["passthrough"]))
        for smoothing in Set(stageTimes.map(\.0)).sorted() {
            let runs = stageTimes.filter { $0.0 == smoothing }
            let beautyBest = best({ $0.contains(smoothing) }, { $0.fps })
            let beautySteady = best({ $0.contains(smoothing) }, { $0.steadyFPS })
            print("beauty (\(smoothing)) / plain transcode = \(String(format: "%.2f", beautyBest / plainBest))x"
                  + " (steady state \(String(format: "%.2f", beautySteady / max(plainSteady, 1e-9)))x)")
            let frames = runs.map(\.2).reduce(0, +)
            var sums: [String: Double] = [:]
            for run in runs { run.1.forEach { sums[$0.key, default: 0] += $0.value } }
            let stages = sums.sorted { $0.key < $1.key }.map { "\($0.key) \(String(format: "%.3f", $0.value / Double(frames)))" }
            print("  GPU ms per frame (\(smoothing)): " + stages.joined(separator: ", "))
            if let threads = busy[smoothing] { print("  thread busy ms per frame (\(smoothing)): " + line(threads)) }
            if let threads = cpu[smoothing] { print("  CPU ms per frame (\(smoothing)): " + line(threads)) }
        }
    }

    /// One JSON object on stdout: best fps per pipeline over the repeats, and GPU ms per frame
    /// per stage for each smoothing method (`Tools/bench-table.py` reads it).
    private static func printJSON(rows: [Row], stageTimes: [(String, [String: Double], Int)],
                                  busy: [String: [String: Double]], cpu: [String: [String: Double]], clip: String,
                                  size: (width: Int, height: Int), frames: Int, settings: EncoderSettings,
                                  device: String, cores: Int) {
        func best(_ prefix: String, _ value: (Row) -> Double? = { $0.fps }) -> Double? {
            rows.filter { $0.name.hasPrefix(prefix) }.compactMap(value).max()
        }
        var beauty: [String: Any] = [:]
        for smoothing in Set(stageTimes.map(\.0)) {
            let runs = stageTimes.filter { $0.0 == smoothing }
            var sums: [String: Double] = [:]
            for run in runs { run.1.forEach { sums[$0.key, default: 0] += $0.value } }
            let frameCount = Double(max(runs.map(\.2).reduce(0, +), 1))
            beauty[smoothing] = ["fps": best("Velvet beauty, \(smoothing) ") ?? 0,
                                 "steady_fps": best("Velvet beauty, \(smoothing) ", { $0.steadyFPS }) ?? 0,
                                 "first_frame_ms": rows.filter { $0.name.hasPrefix("Velvet beauty, \(smoothing) ") }
                                     .compactMap(\.firstFrameMilliseconds).min() ?? 0,
                                 "gpu_ms_per_frame": sums.mapValues { $0 / frameCount },
                                 "busy_ms_per_frame": busy[smoothing] ?? [:], "cpu_ms_per_frame": cpu[smoothing] ?? [:]]
        }
        var report: [String: Any] = [
            "clip": clip, "width": size.width, "height": size.height, "frames": frames, "device": device, "cores": cores,
            "encoder": "\(settings.encoderName(forMuxer: "mp4")) crf \(settings.crf) preset \(settings.preset)",
            "plain_fps": best("plain") ?? 0, "passthrough_fps": best("Velvet passthrough") ?? 0, "beauty": beauty,
            "plain_steady_fps": best("plain", { $0.steadyFPS }) ?? 0, "passthrough_steady_fps": best("Velvet passthrough", { $0.steadyFPS }) ?? 0,
            "plain_busy_ms_per_frame": busy["plain"] ?? [:], "passthrough_busy_ms_per_frame": busy["passthrough"] ?? [:],
            "plain_cpu_ms_per_frame": cpu["plain"] ?? [:], "passthrough_cpu_ms_per_frame": cpu["passthrough"] ?? [:],
        ]
        if let cli = best("ffmpeg CLI") { report["ffmpeg_cli_fps"] = cli }
        if let data = try? JSONSerialization.data(withJSONObject: report, options: [.sortedKeys]) {
            print(String(decoding: data, as: UTF8.self))
        }
    }

    /// Seconds the ffmpeg CLI takes for the same transcode, or nil when it is not installed.
    private static func ffmpegCLI(clip: String, output: String, settings: EncoderSettings) throws -> Double? {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg") else { return nil }
        let file = try OutputFile(path: output)
        let muxer = try EncoderCheck.muxerName(output: output, settings: settings)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments = ["-hide_banner", "-loglevel", "error", "-y", "-i", clip, "-c:v", settings.encoderName(forMuxer: muxer),
                             "-crf", "\(settings.crf)", "-preset", settings.preset, "-f", muxer, file.temporaryPath]
        let start = Date()
        try file.creating { _ in
            try UnfinishedFiles.shared.startingWriter {
                try process.run()
                return process.processIdentifier
            }
        }
        process.waitUntilExit()
        UnfinishedFiles.shared.writerEnded(process.processIdentifier)
        let seconds = Date().timeIntervalSince(start)
        guard process.terminationStatus == 0 else { return nil }
        try file.commit()
        return seconds
    }

    static func parseSize(_ text: String) throws -> (width: Int, height: Int) {
        let fields = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        let parts = fields.count == 2 ? fields.compactMap { Int($0) } : [] // nothing after HEIGHT ('64x48xjunk')
        // The face tracker's smallest frame: a beauty render (demo, bench --beauty) of less fails.
        let sides = FaceTracker.minimumFrameSide...16384
        guard parts.count == 2, parts.allSatisfy({ sides.contains($0) && $0 % 2 == 0 }) else {
            throw UsageError("--size takes WIDTHxHEIGHT with even sides from \(sides.lowerBound) to \(sides.upperBound), got '\(text)'")
        }
        // FFmpeg's own picture limit (av_image_check_size): 16384x16384 failed in the encoder as "Invalid argument".
        guard EncoderCheck.isPictureSize(width: parts[0], height: parts[1]) else {
            throw UsageError("--size \(text) is past FFmpeg's limit of about 268 million pixels a picture")
        }
        return (parts[0], parts[1])
    }
}
