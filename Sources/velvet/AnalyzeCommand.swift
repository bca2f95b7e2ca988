import Foundation
import VelvetFace
import VelvetFiles
import VelvetGPU
import VelvetMedia

/// `velvet analyze INPUT [--json] [--tracks OUT.json] [--overlay OUT.png|OUT.mp4] [--mask OUT.png]`:
/// runs the face tracker on a photo or video, as `render` runs it, and prints, per frame, the
/// faces with track ID, score, box and 468 landmarks and the person mask's coverage: the track
/// file (`TrackFile`) on stdout with --json, written to a file with --tracks, else one summary
/// line per frame. --overlay writes the frame(s) with the person mask tinted and the mesh,
/// regions and boxes drawn; --mask writes the person mask as a grey image (or video).
///
///     velvet analyze INPUT [--json] [--tracks OUT.json] [--overlay OUT] [--mask OUT] [--detector short|full|auto]
///                          [--max-faces 32] [--segmentation-model square|landscape|auto] [--look-ahead K]
///                          [--models DIR] [--device D] [--quiet] [-y|-n]
enum AnalyzeCommand {
    static let stillExtensions: Set<String> = ["png", "jpg", "jpeg", "bmp", "tif", "tiff", "webp"]

    static func run(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        guard let input = arguments.takePositional() else { throw UsageError("analyze needs an INPUT photo or video") }
        try SequenceArguments.parse(&arguments, input: input)
        let json = arguments.flag("--json")
        let quiet = arguments.flag("--quiet")
        let truncation = RenderOptions(allowTruncated: arguments.flag("--allow-truncated"))
        let overlayPath = arguments.value("--overlay")
        let maskPath = arguments.value("--mask")
        let tracksPath = arguments.value("--tracks")
        let detectorName = arguments.value("--detector") ?? "auto"
        let segmentationName = arguments.value("--segmentation-model") ?? "auto"
        let maxFaces = try arguments.int("--max-faces", default: FaceTrackerOptions().maxFaces, range: FaceTrackerOptions.maxFacesRange)
        let lookAheadOption = arguments.has(option: "--look-ahead")
            ? try arguments.int("--look-ahead", default: LookAheadTracker.standardFrames, range: LookAheadTracker.framesRange) : nil
        let models = arguments.value("--models")
        let request = arguments.value("--device")
        let policy = try OverwritePolicy.parse(&arguments)
        try arguments.finish()
        guard let detector = DetectorChoice(rawValue: detectorName) else {
            throw UsageError("--detector must be short, full or auto, got '\(detectorName)'")
        }
        guard let segmentation = SegmentationModel(rawValue: segmentationName) else {
            throw UsageError("--segmentation-model must be square, landscape or auto, got '\(segmentationName)'")
        }
        // The drawings and the track file are files: `-` here is no stream (`--json` prints
        // the tracks on standard output).
        for (path, option) in [(overlayPath, "--overlay"), (maskPath, "--mask"), (tracksPath, "--tracks")] where path == CommandFiles.standardStream {
            throw UsageError("\(option) needs a file, not -" + (option == "--tracks" ? " (--json prints the tracks on standard output)" : ""))
        }
        var paths = CommandFiles(policy: policy)
        paths.input(input)
        paths.modelFiles(models)
        for (path, option) in [(overlayPath, "--overlay"), (maskPath, "--mask")] {
            guard let path else { continue }
            // analyze takes no --format: the extension is the only way to name one.
            if URL(fileURLWithPath: path).pathExtension.isEmpty, !ImageSequence.isPattern(path) {
                throw UsageError("\(option) \(path) has no extension to choose a format by: use .png or .jpg for a picture, "
                                 + ".mp4 or .mkv for a video")
            }
            try CommandFiles.checkEncoder(path, EncoderSettings())
            paths.output(path, option)
        }
        if let tracksPath { paths.output(tracksPath, "--tracks") }
        let still = stillExtensions.contains(URL(fileURLWithPath: input).pathExtension.lowercased()) && !ImageSequence.isPattern(input)
        // The device first: a --device that names none is a usage error, found before any file is checked.
        let context = try GPUContext(request: request)
        try paths.check()
        if json { try paths.checkSummaryDestination() }
        guard FileManager.default.fileExists(atPath: input) || ImageSequence.isPattern(input) else {
            throw MediaError.cannotOpen(path: input, reason: "no such file")
        }
        // A video's drawings are a video, but for a video of one stated frame (as `render` takes
        // it): a picture path would fail only after the whole analysis.
        for (path, option) in [(overlayPath, "--overlay"), (maskPath, "--mask")] where !still {
            guard let path, EncoderCheck.writesOnePicture(output: path, settings: EncoderSettings()) else { continue }
            // An input that cannot be opened says so itself (exit 1), not that the drawing is a picture.
            let oneFrame = try input != CommandFiles.standardStream && !ImageSequence.isPattern(input)
                && InputProbe(path: input).declaredFrames == 1
            if !oneFrame {
                throw UsageError("\(option) \(path) is a picture but \(input) is a video: give a video path (.mp4, .mkv)")
            }
        }

        var options = still ? FaceTrackerOptions.still : FaceTrackerOptions.video
        options.detector = detector
        options.maxFaces = maxFaces
        options.segmentationModel = segmentation
        // Video: the faces a render finds with the same look-ahead (raw landmarks, smoothed over the window).
        let lookAhead = still ? 0 : lookAheadOption ?? (input == CommandFiles.standardStream ? 0 : LookAheadTracker.standardFrames)
        if lookAhead > 0 {
            options.smoothing = nil
            options.holdFrames = max(options.holdFrames, lookAhead) // as `LookAheadTracker` holds a lost face
        }
        let files = models.map { FaceModelFiles(directory: URL(fileURLWithPath: $0, isDirectory: true)) } ?? .standard
        let tracker = try FaceTracker(context: context, options: options, files: files)

        // Pass 1: track every frame (the renderer decodes; its output is thrown away).
        var frames: [TrackFile.Frame] = []
        var cuts: [Bool] = []
        var size = (width: 0, height: 0)
        let scratch = try ScratchFile("analyze.\(still ? "png" : "mkv")")
        let tap = TrackingPass { image, index, time in
            size = (image.width, image.height)
            let result = try tracker.process(image, time: time)
            frames.append(TrackFile.Frame(index: index, time: time, faces: result.faces,
                                          personCoverage: try result.personMask.map { try personCoverage($0, context: context) }))
            cuts.append(tracker.lastFrameWasCut)
        }
        var fast = EncoderSettings()
        fast.preset = "ultrafast"
        if !still { fast.pixelFormat = "yuv444p" } // takes any frame size and input format (4:2:0 refused odd sizes)
        let renderer = try VideoRenderer(context: context)
        let summary = try renderer.render(input: input, output: scratch.path, settings: fast, options: truncation, effect: tap,
                                          progress: ProgressReporter(quiet: quiet || json))
        for warning in summary.warnings { printError("velvet: warning: \(warning)") }
        if lookAhead > 0 {
            let smoothed = TrackWindow.smoothing(zip(frames, cuts).map { ($0.faces, $1) }, lookAhead: lookAhead)
            for index in frames.indices { frames[index].faces = smoothed[index] }
        }

        let trackFile = TrackFile(input: input, width: size.width, height: size.height,
                                  tracker: TrackFile.Tracker(mode: still ? "still" : "video", detector: detector.rawValue, maxFaces: maxFaces),
                                  frames: frames)
        // Every output lands once all are finished: a drawing that fails leaves none of them.
        let outputs = OutputGroup()
        defer { outputs.discard() }
        // The document is written piece by piece, never held whole (a long clip's is many times
        // its faces): into the track file, and for --json into a scratch file printed at the end.
        func writeDocument(_ write: (Data) throws -> Void) throws {
            try trackFile.encode { try write(Data($0.utf8)) }
            try write(Data("\n".utf8))
        }
        if let tracksPath { outputs.add(try OutputFile.prepared(to: tracksPath, policy: policy.commit, writing: writeDocument)) }
        let printedDocument = json ? try ScratchFile("tracks.json") : nil
        if let printedDocument {
            guard FileManager.default.createFile(atPath: printedDocument.path, contents: nil),
                  let handle = FileHandle(forWritingAtPath: printedDocument.path) else {
                throw OutputFileError.cannotWrite(path: printedDocument.path, reason: "cannot create it")
            }
            defer { try? handle.close() }
            try writeDocument { try handle.write(contentsOf: $0) }
        }
        // Printed once every output is written: an interruption or a failure in the drawings
        // leaves standard output with the error alone, not a whole-looking report before it.
        let report = json ? [] : frames.map { frame in
            let faces = frame.faces.map { face in
                String(format: "#%d score %.3f box %.1f,%.1f %.1fx%.1f", face.trackID, face.score,
                       face.box.x, face.box.y, face.box.width, face.box.height)
                    + (face.missedFrames > 0 ? String(format: " held %d (weight %.2f)", face.missedFrames, face.weight) : "")
            }
            return "frame \(frame.index) (\(String(format: "%.3f", frame.time)) s): \(frame.faces.count) face(s)"
                + (faces.isEmpty ? "" : ": " + faces.joined(separator: "; "))
        }

        // Pass 2: drawings, each through the renderer (stills and videos alike).
        let facesByFrame = Dictionary(frames.map { ($0.index, $0.faces) }, uniquingKeysWith: { a, _ in a })
        let segmentationModel = segmentation.resolved(width: max(size.width, 1), height: max(size.height, 1))
        // x264 drops a 4:2:0 frame's odd row or column: a video of drawings of an odd size is 4:4:4.
        func drawing(to path: String) -> EncoderSettings {
            var settings = EncoderSettings()
            if size.width % 2 == 1 || size.height % 2 == 1, !EncoderCheck.writesOnePicture(output: path, settings: settings) {
                settings.pixelFormat = "yuv444p"
            }
            return settings
        }
        if let overlayPath {
            let effect = try AnalysisDrawing(context: context, files: files, segmentation: segmentationModel,
                                             faces: facesByFrame, maskOnly: false)
            _ = try renderer.render(input: input, output: overlayPath, settings: drawing(to: overlayPath), options: truncation, effect: effect,
                                    progress: ProgressReporter(quiet: quiet || json),
                                    commit: outputs.holding(policy.commit))
        }
        if let maskPath {
            let effect = try AnalysisDrawing(context: context, files: files, segmentation: segmentationModel,
                                             faces: facesByFrame, maskOnly: true)
            _ = try renderer.render(input: input, output: maskPath, settings: drawing(to: maskPath), options: truncation, effect: effect,
                                    progress: ProgressReporter(quiet: quiet || json),
                                    commit: outputs.holding(policy.commit))
        }
        try ValidationReport.check(context)
        try outputs.commit()
        if let printedDocument { try StandardOutput.copy(fileAt: printedDocument.path) }
        report.forEach { print($0) }
        try StandardOutput.flush() // whole before a signal's `_exit`, which flushes nothing
    }

    /// The share of the model-sized person probability at 0.5 or more (the segmentation the
    /// tracker ran on the frame, read back once).
    static func personCoverage(_ mask: GPUImage, context: GPUContext) throws -> Double {
        let recorder = try CommandRecorder(context: context)
        let readback = try recorder.download(mask)
        _ = try recorder.submit().wait()
        let values = readback.raw.bindMemory(to: Float.self)
        return Double(values.filter { $0 >= 0.5 }.count) / Double(max(values.count, 1))
    }
}

/// The second pass of `analyze`: draws the tracked faces of each frame (and the person
/// mask, segmented again in the frame's own command buffer) into the rendered output.
final class AnalysisDrawing: FrameEffect, @unchecked Sendable {
    private let overlay: FaceOverlay
    private let segmenter: PersonSegmenter
    private let faces: [Int: [Face]]
    private let maskOnly: Bool

    init(context: GPUContext, files: FaceModelFiles, segmentation: SegmentationModel, faces: [Int: [Face]],
         maskOnly: Bool) throws {
        overlay = try FaceOverlay(context: context)
        segmenter = try PersonSegmenter(context: context, model: segmentation, files: files)
        self.faces = faces
        self.maskOnly = maskOnly
    }

    /// The overlay's mesh and mask tint are colour-coded: a grey input is written in colour
    /// (as `--debug-view` writes it); the mask alone is grey.
    var drawsInColour: Bool { !maskOnly }

    func record(_ frame: EffectFrame, on recorder: CommandRecorder) throws -> FrameChange {
        try segmenter.record(on: recorder, image: frame.input)
        if maskOnly {
            overlay.recordMask(on: recorder, mask: segmenter.lowResolutionMask, output: frame.output)
        } else {
            try overlay.record(on: recorder, input: frame.input, output: frame.output, faces: faces[frame.index] ?? [],
                               mask: segmenter.lowResolutionMask)
        }
        return .whole
    }
}
