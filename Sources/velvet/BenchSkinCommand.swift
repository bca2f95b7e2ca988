import Foundation
import VelvetBeauty
import VelvetFiles
import VelvetGPU
import VelvetMedia

/// `velvet bench skin [--input RGBA --width W --height H --faces FACE.json] [--method bilateral|freqsep|both]
/// [--bilateral grid|exact] [--iterations N] [--output PREFIX] [--device D]`
///
/// Times mask + zones + spot removal + smoothing + blend (the tracker excluded) from GPU
/// timestamps, median over `--iterations` frames after two warm-up frames, and prints one
/// JSON line: {"device", "width", "height", "faces", "methods": {METHOD: {"median_ms",
/// "min_ms", "sections": {label: median_ms}}}}. `--faces` takes the fixture format of
/// Tools/make-face-fixtures.py (landmarks in the input's pixels, person mask stretched over
/// the frame). Without `--input` a synthetic frame with no face is used (the copy path).
/// `--output PREFIX` writes PREFIX-METHOD.rgba (raw RGBA8) for the script to check.
enum BenchSkinCommand {
    static func run(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        if arguments.positional.first == "skin" { _ = arguments.takePositional() }
        let width = try arguments.int("--width", default: 1920, range: 1...16384)
        let height = try arguments.int("--height", default: 1080, range: 1...16384)
        let iterations = try arguments.int("--iterations", default: 20, range: 1...10000)
        let methodText = arguments.value("--method") ?? "both"
        let bilateralText = arguments.value("--bilateral") ?? BeautySettings.BilateralImplementation.grid.rawValue
        let inputPath = arguments.value("--input")
        let facesPath = arguments.value("--faces")
        let outputPrefix = arguments.value("--output")
        try CommandFiles.refuseStandardStream(outputPrefix, option: "--output")
        let request = arguments.value("--device")
        try arguments.finish()

        let methods: [BeautySettings.Smoothing]
        switch methodText {
        case "both": methods = [.bilateral, .frequencySeparation]
        default:
            guard let method = BeautySettings.Smoothing(rawValue: methodText) else {
                throw UsageError("--method takes bilateral, freqsep or both, got '\(methodText)'")
            }
            methods = [method]
        }
        guard let bilateral = BeautySettings.BilateralImplementation(rawValue: bilateralText) else {
            throw UsageError("--bilateral takes grid or exact, got '\(bilateralText)'")
        }

        // Benchmark outputs are overwritten by design, but never an input.
        var files = CommandFiles(policy: .overwrite)
        if let inputPath { files.input(inputPath, "--input") }
        if let facesPath { files.input(facesPath, "--faces") }
        if let outputPrefix { methods.forEach { files.output("\(outputPrefix)-\($0.rawValue).rgba", "--output") } }
        // The device first: a --device that names none is a usage error, found before any file is checked.
        let context = try GPUContext(request: request)
        try files.check()

        let pixels = try BenchPixels.load(inputPath, width: width, height: height)
        let (faces, mask) = try facesPath.map(loadFaces) ?? ([], nil)

        let image = try GPUImage(context: context, width: width, height: height, format: .rgba8)
        var person: GPUImage? = nil
        let upload = try CommandRecorder(context: context)
        try pixels.withUnsafeBytes { try upload.upload($0, to: image) }
        if let mask {
            let maskImage = try GPUImage(context: context, width: mask.width, height: mask.height, format: .r32f)
            try mask.values.withUnsafeBytes { try upload.upload($0, to: maskImage) }
            person = maskImage
        }
        try upload.submit().wait()

        let pipeline = try SkinPipeline(context: context)
        var results: [String: Any] = [:]
        for method in methods {
            var settings = BeautySettings.standard
            settings.smoothing = method
            settings.bilateral = bilateral
            var totals: [Double] = []
            var sections: [String: [Double]] = [:]
            for iteration in 0..<(iterations + 2) {
                let recorder = try CommandRecorder(context: context)
                let frame = try pipeline.record(on: recorder, image: image, faces: faces, personMask: person, settings: settings)
                let readback = iteration == iterations + 1 && outputPrefix != nil ? try recorder.download(frame.output) : nil
                let timings = try recorder.submit().wait()
                if let readback, let outputPrefix {
                    try OutputFile.write(Data(readback.bytes), to: "\(outputPrefix)-\(method.rawValue).rgba")
                }
                guard iteration >= 2 else { continue } // warm caches and shader compilation
                totals.append(timings.totalMilliseconds)
                for section in timings.sections { sections[section.label, default: []].append(section.milliseconds) }
            }
            guard !totals.isEmpty, totals.contains(where: { $0 > 0 }) else {
                throw GPUError.unsupported("timestamps on \(context.device.name)")
            }
            let sorted = totals.sorted()
            results[method.rawValue] = [
                "median_ms": sorted.median, "min_ms": sorted[0],
                "sections": sections.mapValues(\.median),
            ] as [String: Any]
        }
        let output: [String: Any] = [
            "device": context.device.name, "kind": context.device.kind.rawValue, "width": width, "height": height,
            "faces": faces.count, "iterations": iterations, "bilateral": bilateral.rawValue, "methods": results,
        ]
        let data = try JSONSerialization.data(withJSONObject: output, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
        try ValidationReport.check(context)
    }

    /// Faces and the person mask from a fixture-format JSON file.
    private static func loadFaces(_ path: String) throws -> ([BeautyFace], PlaneImage?) {
        guard let data = FileManager.default.contents(atPath: path) else { throw MediaError.cannotOpen(path: path, reason: "no such file") }
        guard let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let faceList = json["faces"] as? [[String: Any]] else {
            throw GPUError.invalidArgument("\(path): not a face fixture (see Tools/make-face-fixtures.py)")
        }
        let faces = try faceList.map { face -> BeautyFace in
            guard let points = face["landmarks"] as? [[Double]], points.allSatisfy({ $0.count >= 2 }) else {
                throw GPUError.invalidArgument("\(path): a face without landmarks")
            }
            return try BeautyFace(landmarks: points.map { SIMD2(Float($0[0]), Float($0[1])) })
        }
        guard let mask = json["person_mask"] as? [String: Any], let maskWidth = mask["width"] as? Int,
              let maskHeight = mask["height"] as? Int, let encoded = mask["data"] as? String,
              let bytes = Data(base64Encoded: encoded), bytes.count == maskWidth * maskHeight else {
            return (faces, nil)
        }
        return (faces, PlaneImage(width: maskWidth, height: maskHeight, values: bytes.map { Float($0) / 255 }))
    }
}
