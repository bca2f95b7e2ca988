import Foundation
import VelvetFiles
import VelvetGPU
import VelvetMedia

/// `velvet bench blur`: GPU time of the separable Gaussian blur, from timestamps.
/// Prints one JSON line so Tools/bench-blur.py can put it beside OpenCV in one table;
/// `--input`/`--output` read and write raw RGBA8 so the script can compare the pixels too.
enum BenchCommand {
    static func run(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        switch arguments.takePositional() {
        case "blur": try blur(arguments)
        case "media": try MediaBenchmark.run(arguments)
        case "nn": try BenchNNCommand.run(arguments)
        case "tracker": try BenchTrackerCommand.run(arguments)
        case "skin": try BenchSkinCommand.run(arguments)
        case "soak": try SoakCommand.run(arguments)
        case "quality": try BenchQualityCommand.run(arguments)
        default: throw UsageError("bench takes: blur, media, nn, tracker, skin, soak, quality")
        }
    }

    static func blur(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        let width = try arguments.int("--width", default: 1920, range: 1...16384)
        let height = try arguments.int("--height", default: 1080, range: 1...16384)
        let sigma = try arguments.float("--sigma", default: 12, range: 0...GaussianBlur.maxSigma)
        let iterations = try arguments.int("--iterations", default: 20, range: 1...10000)
        let inputPath = arguments.value("--input")
        let outputPath = arguments.value("--output")
        let request = arguments.value("--device")
        try arguments.finish()
        var files = CommandFiles(policy: .overwrite)
        if let inputPath { files.input(inputPath, "--input") }
        if let outputPath { files.output(outputPath, "--output") }
        // The device first: a --device that names none is a usage error, found before any file is checked.
        let context = try GPUContext(request: request)
        try files.check()

        let pixels = try BenchPixels.load(inputPath, width: width, height: height)
        let source = try GPUImage(context: context, width: width, height: height, format: .rgba8)
        let scratch = try GPUImage(context: context, width: width, height: height, format: .rgba16f)
        let destination = try GPUImage(context: context, width: width, height: height, format: .rgba8)
        let blur = try GaussianBlur(context: context, sigma: sigma)
        let upload = try CommandRecorder(context: context)
        try pixels.withUnsafeBytes { try upload.upload($0, to: source) }
        try upload.submit().wait()

        var samples: [Double] = []
        for _ in 0..<(iterations + 2) {
            let recorder = try CommandRecorder(context: context)
            recorder.beginSection("blur")
            try blur.record(on: recorder, source: source, destination: destination, scratch: scratch)
            if let milliseconds = try recorder.submit().wait()["blur"] { samples.append(milliseconds) }
        }
        if let outputPath {
            let recorder = try CommandRecorder(context: context)
            let readback = try recorder.download(destination)
            try recorder.submit().wait()
            try OutputFile.write(Data(readback.bytes), to: outputPath)
        }
        let measured = samples.dropFirst(2).sorted() // the first runs warm caches and JIT
        guard !measured.isEmpty else { throw GPUError.unsupported("timestamps on \(context.device.name)") }
        let median = Array(measured).median
        let result: [String: Any] = [
            "device": context.device.name, "kind": context.device.kind.rawValue, "width": width, "height": height,
            "sigma": Double(sigma), "iterations": measured.count, "median_ms": median, "min_ms": measured.first!,
        ]
        let data = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
        try ValidationReport.check(context)
    }
}
