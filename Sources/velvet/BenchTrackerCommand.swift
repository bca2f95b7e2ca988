import Foundation
import VelvetFace
import VelvetGPU
import VelvetMedia

/// `velvet bench tracker`: cost of the face tracker per frame on a frame shown again and
/// again: in tracking mode (mesh from the previous landmarks, segmentation every frame, a
/// detection pass every 10 frames), or with `--still` as a photo (every frame a full
/// search: both detectors, the tiles, turned views when nothing is upright). Prints one
/// JSON line (Tools/bench-tracker.py sets it beside MediaPipe): wall-clock ms per frame (CPU
/// work and GPU round trips included) and GPU ms from timestamps, medians and means after
/// `--warmup` frames (the mean counts the detection passes in).
///
///     velvet bench tracker --input FRAME.png [--frames 100] [--warmup 10] [--still]
///                          [--detector short|full|auto] [--max-faces 1]
///                          [--segmentation-model square|landscape|auto] [--models DIR] [--device D]
enum BenchTrackerCommand {
    /// `arguments` holds what follows `bench tracker`.
    static func run(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        guard let input = arguments.value("--input") else { throw UsageError("bench tracker needs --input FRAME (a photo with a face)") }
        guard input != CommandFiles.standardStream else {
            throw UsageError("--input - (standard input) works only with velvet render, which reads its input once: give a file")
        }
        let frames = try arguments.int("--frames", default: 100, range: 1...100_000)
        let warmup = try arguments.int("--warmup", default: 10, range: 0...10_000)
        let still = arguments.flag("--still")
        let detectorName = arguments.value("--detector") ?? DetectorChoice.auto.rawValue
        let maxFaces = try arguments.int("--max-faces", default: 1, range: FaceTrackerOptions.maxFacesRange)
        let segmentationName = arguments.value("--segmentation-model") ?? "auto"
        let models = arguments.value("--models")
        let request = arguments.value("--device")
        try arguments.finish()
        guard let detector = DetectorChoice(rawValue: detectorName) else { throw UsageError("--detector takes short, full or auto") }
        guard let segmentation = SegmentationModel(rawValue: segmentationName) else {
            throw UsageError("--segmentation-model must be square, landscape or auto, got '\(segmentationName)'")
        }

        let context = try GPUContext(request: request)
        let image = try ImageLoader.load(input, context: context)
        var options = still ? FaceTrackerOptions.still : FaceTrackerOptions.video
        options.maxFaces = maxFaces
        options.detector = detector
        options.segmentationModel = segmentation
        let files = models.map { FaceModelFiles(directory: URL(fileURLWithPath: $0, isDirectory: true)) } ?? .standard
        let tracker = try FaceTracker(context: context, options: options, files: files)

        var wall: [Double] = [], gpu: [Double] = [], submissions: [Int] = []
        var sections: [String: [Double]] = [:]
        var faces = 0
        for index in 0..<(warmup + frames) {
            let start = DispatchTime.now().uptimeNanoseconds
            let result = try tracker.process(image, time: Double(index) / 30)
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
            guard index >= warmup else { continue }
            wall.append(elapsed)
            gpu.append(tracker.lastTimings.totalMilliseconds)
            var frameSections: [String: Double] = [:]
            for section in tracker.lastTimings.sections { frameSections[section.label, default: 0] += section.milliseconds }
            for (label, milliseconds) in frameSections { sections[label, default: []].append(milliseconds) }
            submissions.append(tracker.lastSubmissionCount)
            faces = min(faces == 0 ? result.faces.count : faces, result.faces.count)
        }
        func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(values.count) }
        let report: [String: Any] = [
            "device": context.device.name, "kind": context.device.kind.rawValue,
            "width": image.width, "height": image.height, "frames": frames,
            "wall_ms_median": wall.median, "wall_ms_min": wall.min()!, "gpu_ms_median": gpu.median,
            "wall_ms_mean": mean(wall), "gpu_ms_mean": mean(gpu), "mode": still ? "still" : "video",
            "detector": detector.rawValue, "max_faces": maxFaces,
            // Per section, the mean over the frames it ran in and how many those were.
            "gpu_ms_sections": sections.mapValues { ["mean": mean($0), "frames": $0.count] },
            "submissions_per_frame": Double(submissions.reduce(0, +)) / Double(submissions.count),
            "faces": faces,
            "segmentation_model": segmentation.resolved(width: image.width, height: image.height).rawValue,
        ]
        let data = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
        try ValidationReport.check(context)
    }
}
