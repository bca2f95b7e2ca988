import Foundation
import VelvetFace
import VelvetGPU
import VelvetNN

/// `velvet bench nn`: GPU time of one inference per MediaPipe model, from timestamps
/// (median of `--iterations` after `--warmup` runs), on a fixed photo-like input.
/// Prints one JSON line so Tools/bench-nn.py can set it beside LiteRT on the CPU.
///
///     velvet bench nn [--models DIR] [--model NAME] [--iterations 50] [--warmup 5] [--device D] [--profile 1|2]
///
/// `--profile 1` adds, per model, the GPU time of each kernel launch (one extra
/// inference, each launch timed alone) summed by launch name; `--profile 2` also lists
/// every launch with its shapes, and what an empty launch costs (`launch_us`).
enum BenchNNCommand {
    static let modelNames = [
        "face_detection_short_range", "face_detection_full_range_sparse", "face_landmark",
        "selfie_segmentation", "selfie_segmentation_landscape",
    ]

    /// `arguments` holds what follows `bench nn`.
    static func run(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        // Where every other command looks (a bundle's models/ beside the binary too), unless named.
        let directory = arguments.value("--models") ?? FaceModelFiles.standard.directory.path
        let only = arguments.value("--model")
        let iterations = try arguments.int("--iterations", default: 50, range: 1...10000)
        let warmup = try arguments.int("--warmup", default: 5, range: 0...1000)
        let request = arguments.value("--device")
        let profileLevel = try arguments.int("--profile", default: 0, range: 0...2)
        let profile = profileLevel > 0
        try arguments.finish()
        if let only, !modelNames.contains(only) {
            throw UsageError("--model must be one of \(modelNames.joined(separator: ", ")), got '\(only)'")
        }

        let context = try GPUContext(request: request)
        let kernels = NNKernels(context: context)
        /// GPU ms of what `record` records, median and least of `iterations` after `warmup`.
        func median(_ record: (CommandRecorder) -> Void) throws -> (median: Double, min: Double) {
            var samples: [Double] = []
            for _ in 0..<(warmup + iterations) {
                let recorder = try CommandRecorder(context: context)
                recorder.beginSection("inference")
                record(recorder)
                recorder.endSection()
                if let milliseconds = try recorder.submit().wait()["inference"] { samples.append(milliseconds) }
            }
            let measured = samples.dropFirst(warmup).sorted()
            guard !measured.isEmpty else { throw GPUError.unsupported("timestamps on \(context.device.name)") }
            return (Array(measured).median, measured.first!)
        }
        var results: [[String: Any]] = []
        var plans: [String: NNModelPlan] = [:]
        for name in modelNames where only == nil || only == name {
            let url = URL(fileURLWithPath: directory).appendingPathComponent(name + ".tflite")
            guard FileManager.default.fileExists(atPath: url.path) else {
                throw NNError.invalidArgument("\(url.path) is missing: run Tools/fetch-models.sh (or pass --models DIR)")
            }
            let plan = try NNModelPlan(context: context, contentsOf: url, kernels: kernels)
            let upload = try CommandRecorder(context: context)
            for (index, input) in plan.inputs.enumerated() {
                try plan.writeInput(photoLikeInput(shape: input.shape), index: index, on: upload)
            }
            try upload.submit().wait()
            plans[name] = plan

            let measured = try median { plan.record(on: $0) }
            var result: [String: Any] = [
                "model": name, "median_ms": measured.median, "min_ms": measured.min,
                "launches": plan.launchCount, "levels": plan.levelCount, "arena_bytes": plan.arenaByteCount, "iterations": iterations,
            ]
            if profile {
                let recorder = try CommandRecorder(context: context)
                plan.recordProfiled(on: recorder)
                let timings = try recorder.submit().wait()
                var byKind: [String: Double] = [:]
                for (label, milliseconds) in timings.sections {
                    byKind[String(label.split(separator: ":").last ?? ""), default: 0] += milliseconds
                }
                result["profile_ms"] = byKind
                if profileLevel == 2 {
                    result["launches_ms"] = timings.sections.map { section in
                        let index = Int(section.label.split(separator: ":").first ?? "") ?? 0
                        return "\(String(format: "%.4f", section.milliseconds)) \(plan.launchDetails[index])"
                    }
                }
            }
            results.append(result)
        }
        var report: [String: Any] = ["device": context.device.name, "kind": context.device.kind.rawValue, "models": results]
        // The models a tracker frame runs together, one after another and side by side
        // (`NNModelPlan.recordSideBySide`): what sharing the barriers saves.
        var together: [[String: Any]] = []
        for names in Self.sideBySideSets {
            let members = names.compactMap { plans[$0] }
            guard members.count == names.count else { continue }
            let sequential = try median { recorder in members.forEach { $0.record(on: recorder) } }
            let sideBySide = try median { NNModelPlan.recordSideBySide(members, on: $0) }
            together.append(["models": names.joined(separator: " + "), "one_after_another_ms": sequential.median,
                             "side_by_side_ms": sideBySide.median])
        }
        if !together.isEmpty { report["together"] = together }
        if profileLevel == 2 {
            let overhead = try NNLaunchOverhead.measure(kernels: kernels)
            report["launch_us"] = ["dependent": overhead.dependentMicroseconds, "compute_barrier": overhead.computeBarrierMicroseconds,
                                   "independent": overhead.independentMicroseconds]
        }
        let data = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
        try ValidationReport.check(context)
    }

    /// Sets of models a tracker frame runs together: a tracked face's mesh with the person
    /// mask, and a detection pass's two detectors (with a mesh).
    static let sideBySideSets = [
        ["face_landmark", "selfie_segmentation_landscape"],
        ["face_detection_short_range", "face_detection_full_range_sparse"],
        ["face_detection_short_range", "face_detection_full_range_sparse", "face_landmark", "selfie_segmentation_landscape"],
    ]

    /// Smooth gradients in the models' input range; the time does not depend on the values.
    static func photoLikeInput(shape: [Int]) -> [Float] {
        let height = shape.count == 4 ? shape[1] : 1, width = shape.count == 4 ? shape[2] : 1
        let channels = shape.last ?? 1
        return (0..<shape.reduce(1, *)).map { index in
            let c = index % channels, pixel = index / channels
            let x = Float(pixel % width) / Float(width), y = Float(pixel / width) / Float(height)
            return (x * 0.6 + y * 0.3 + Float(c) * 0.05) * 2 - 1
        }
    }
}
