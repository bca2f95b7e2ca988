import Foundation
import VelvetBeauty
import VelvetFiles
import VelvetGPU
import VelvetMedia
import VelvetPipeline

/// `velvet demo`: the README's first command. Makes a short clip with known motion (pan,
/// zoom, a head tilt) from the bundled-by-setup face photo, renders it with the default
/// preset (frequency separation) and with bilateral smoothing for comparison, renders the photo itself, and
/// writes everything into `demo-output/`.
enum DemoCommand {
    static func run(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        let directory = arguments.value("--output-dir") ?? "demo-output"
        try CommandFiles.refuseStandardStream(directory, option: "--output-dir")
        let assets = arguments.value("--assets") ?? ProcessInfo.processInfo.environment["VELVET_TEST_ASSETS"].flatMap { $0.isEmpty ? nil : $0 } ?? "test-assets"
        let frames = try arguments.int("--frames", default: 48, range: 2...2000)
        let size = try MediaBenchmark.parseSize(arguments.value("--size") ?? "640x360")
        let request = arguments.value("--device")
        let quiet = arguments.flag("--quiet")
        let policy = try OverwritePolicy.parse(&arguments)
        try arguments.finish()

        let photo = assets + "/grace_hopper.jpg"
        guard FileManager.default.fileExists(atPath: photo) else {
            throw MediaError.cannotOpen(path: photo, reason: "no such file: run Tools/setup.sh --assets (or Tools/fetch-test-assets.sh)")
        }
        let clip = directory + "/before.mp4", still = directory + "/after.png", comparison = directory + "/before-after.png"
        let renders = [("after", BeautySettings.Smoothing.frequencySeparation), ("after-bilateral", .bilateral)]
            .map { (output: "\(directory)/\($0.0).mp4", smoothing: $0.1) }
        // A --device that names none is a usage error: found before the folder is made.
        let context = try GPUContext(request: request)
        try Directory.create(directory)
        var files = CommandFiles(policy: policy)
        files.input(photo, "the photo")
        for output in [clip] + renders.map(\.output) + [still, comparison] { files.output(output, "demo output") }
        try files.check()
        let started = Date()
        func say(_ line: String) { if !quiet { printError("velvet demo: \(line)") } }

        let effects = try renders.map {
            try BeautyEffect(context: context, options: try BeautyArguments.defaultOptions(smoothing: $0.smoothing, context: context))
        }
        // A size the renders would refuse for memory is refused before the clip is written.
        for effect in effects {
            try MemoryEstimate.checkVideo(width: size.width, height: size.height, effect: effect, context: context, path: clip)
        }

        // 1. The clip: the photo panning, zooming in 15 % and tilting +-8 degrees.
        let image = try ImageLoader.load(photo, context: context)
        // Fill the frame (no replicated border in view) with the face in the upper middle.
        let base = max(Double(size.width) / Double(image.width), Double(size.height) / Double(image.height)) * 1.25
        say("making \(clip) (\(frames) frames, \(size.width)x\(size.height)) from \(photo)")
        try ClipSynthesizer(context: context).write(photo: image, to: clip, width: size.width, height: size.height,
                                                    frames: frames, noiseSigma: 1 / 255, commit: policy.commit) { index in
            let t = Double(index) / Double(frames - 1)
            return SimilarityTransform(scale: base * (1 + 0.15 * t), rotation: 0.14 * sin(2 * .pi * t),
                                       translation: (x: 40 * (t - 0.5), y: Double(size.height) * 0.3))
        }

        // 2. The renders: default (frequency separation) and bilateral, for comparison.
        let renderer = try VideoRenderer(context: context)
        var lines: [String] = []
        for ((output, smoothing), effect) in zip(renders, effects) {
            say("rendering \(output) (\(smoothing.rawValue))")
            let summary = try renderer.render(input: clip, output: output, effect: effect, progress: ProgressReporter(quiet: quiet),
                                              commit: policy.commit)
            let withFaces = effect.facesPerFrame.filter { $0 > 0 }.count
            lines.append("\(output): \(summary.frames) frames, a face in \(withFaces), \(String(format: "%.1f", summary.framesPerSecond)) fps")
        }

        // 3. The photo itself, and the before | after pair side by side.
        let defaults = try BeautyArguments.defaultOptions(smoothing: .frequencySeparation, context: context)
        _ = try renderer.render(input: photo, output: still, effect: try BeautyEffect(context: context, options: defaults),
                                commit: policy.commit)
        let after = try ImageLoader.load(still, context: context)
        let pair = try GPUImage(context: context, width: image.width * 2, height: image.height, format: .rgba16f)
        let recorder = try CommandRecorder(context: context)
        try recorder.copyRegion(from: image, to: pair, x: 0, y: 0, width: image.width, height: image.height)
        try recorder.copyRegion(from: after, to: pair, x: 0, y: 0, width: image.width, height: image.height, toX: image.width)
        try recorder.submit().wait()
        try ClipSynthesizer(context: context).write(photo: pair, to: comparison, width: pair.width & ~1, height: pair.height & ~1,
                                                    frames: 1, commit: policy.commit) { _ in SimilarityTransform() }
        try ValidationReport.check(context)

        print("Velvet demo, \(String(format: "%.0f", Date().timeIntervalSince(started))) s on \(context.device.name):")
        print("  \(clip): the input clip (pan, zoom, head tilt)")
        lines.forEach { print("  \($0)") }
        print("  \(still): the photo rendered with the default settings")
        print("  \(comparison): before | after")
    }
}
