import Foundation
import VelvetFace
import VelvetFiles
import VelvetGPU
import VelvetMedia

/// `velvet analyze INPUT [--json] [--overlay OUT.png|OUT.mp4] [--mask OUT.png]`: runs the face
/// tracker on a photo or video and prints, per frame, the faces with score, box and 468
/// landmarks (JSON with --json, else one summary line per frame). --overlay writes the frame(s)
/// with the person mask tinted and the mesh, regions and boxes drawn; --mask writes the
/// person mask as a grey image (or video).
///
///     velvet analyze INPUT [--json] [--overlay OUT] [--mask OUT] [--detector short|full|auto]
///                          [--max-faces 32] [--segmentation-model square|landscape|auto]
///                          [--models DIR] [--device D] [--quiet] [-y|-n]
enum AnalyzeCommand {
    static let stillExtensions: Set<String> = ["png", "jpg", "jpeg", "bmp", "tif", "tiff", "webp"]

    static func run(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        guard let input = arguments.takePositional() else { throw UsageError("analyze needs an INPUT photo or video") }
        let json = arguments.flag("--json")
        let quiet = arguments.flag("--quiet")
        let overlayPath = arguments.value("--overlay")
        let maskPath = arguments.value("--mask")
        let detectorName = arguments.value("--detector") ?? "auto"
        let segmentationName = arguments.value("--segmentation-model") ?? "auto"
        let maxFaces = try arguments.int("--max-faces", default: FaceTrackerOptions().maxFaces, range: FaceTrackerOptions.maxFacesRange)
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
        var paths = CommandFiles(policy: policy)
        paths.input(input)
        for (path, option) in [(overlayPath, "--overlay"), (maskPath, "--mask")] {
            guard let path else { continue }
            try CommandFiles.checkEncoder(path, EncoderSettings())
            paths.output(path, option)
        }
        try paths.check()
        guard FileManager.default.fileExists(atPath: input) else { throw MediaError.cannotOpen(path: input, reason: "no such file") }

        let still = stillExtensions.contains(URL(fileURLWithPath: input).pathExtension.lowercased())
        var options = still ? FaceTrackerOptions.still : FaceTrackerOptions.video
        options.detector = detector
        options.maxFaces = maxFaces
        options.segmentationModel = segmentation
        options.fullResolutionMask = false
        options.segmentationInterval = 0 // the drawings segment again in their own pass
        let files = models.map { FaceModelFiles(directory: URL(fileURLWithPath: $0, isDirectory: true)) } ?? .standard
        let context = try GPUContext(request: request)
        let tracker = try FaceTracker(context: context, options: options, files: files)

        // Pass 1: track every frame (the renderer decodes; its output is thrown away).
        var frames: [(index: Int, time: Double, faces: [Face])] = []
        var size = (width: 0, height: 0)
        let scratch = ScratchFile("velvet-analyze-\(getpid()).\(still ? "png" : "mkv")")
        let tap = TrackingPass { image, index, time in
            size = (image.width, image.height)
            let result = try tracker.process(image, time: time)
            frames.append((index, time, result.faces))
        }
        var fast = EncoderSettings()
        fast.preset = "ultrafast"
        let renderer = try VideoRenderer(context: context)
        _ = try renderer.render(input: input, output: scratch.path, settings: fast, effect: tap,
                                progress: ProgressReporter(quiet: quiet || json))

        if json {
            print(jsonReport(input: input, size: size, frames: frames))
        } else {
            for frame in frames {
                let faces = frame.faces.map { face in
                    String(format: "#%d score %.3f box %.1f,%.1f %.1fx%.1f", face.trackID, face.score,
                           face.box.x, face.box.y, face.box.width, face.box.height)
                        + (face.missedFrames > 0 ? String(format: " held %d (weight %.2f)", face.missedFrames, face.weight) : "")
                }
                print("frame \(frame.index) (\(String(format: "%.3f", frame.time)) s): \(frame.faces.count) face(s)"
                      + (faces.isEmpty ? "" : ": " + faces.joined(separator: "; ")))
            }
        }

        // Pass 2: drawings, each through the renderer (stills and videos alike).
        let facesByFrame = Dictionary(frames.map { ($0.index, $0.faces) }, uniquingKeysWith: { a, _ in a })
        let segmentationModel = segmentation.resolved(width: max(size.width, 1), height: max(size.height, 1))
        if let overlayPath {
            let effect = try AnalysisDrawing(context: context, files: files, segmentation: segmentationModel,
                                             faces: facesByFrame, maskOnly: false)
            _ = try renderer.render(input: input, output: overlayPath, effect: effect, progress: ProgressReporter(quiet: quiet || json),
                                    commit: policy.commit)
        }
        if let maskPath {
            let effect = try AnalysisDrawing(context: context, files: files, segmentation: segmentationModel,
                                             faces: facesByFrame, maskOnly: true)
            _ = try renderer.render(input: input, output: maskPath, effect: effect, progress: ProgressReporter(quiet: quiet || json),
                                    commit: policy.commit)
        }
        try ValidationReport.check(context)
    }

    static func jsonReport(input: String, size: (width: Int, height: Int),
                           frames: [(index: Int, time: Double, faces: [Face])]) -> String {
        func number(_ value: Float) -> String { String(format: "%.3f", value) }
        var text = "{\"input\":\(quoted(input)),\"width\":\(size.width),\"height\":\(size.height),\"frames\":["
        for (position, frame) in frames.enumerated() {
            if position > 0 { text += "," }
            text += "{\"frame\":\(frame.index),\"time\":\(String(format: "%.4f", frame.time)),\"faces\":["
            for (f, face) in frame.faces.enumerated() {
                if f > 0 { text += "," }
                let box = [face.box.x, face.box.y, face.box.width, face.box.height].map(number).joined(separator: ",")
                let landmarks = face.landmarks.map { "[\(number($0.x)),\(number($0.y)),\(number($0.z))]" }.joined(separator: ",")
                text += "{\"track\":\(face.trackID),\"score\":\(number(face.score)),\"held\":\(face.missedFrames),"
                    + "\"weight\":\(number(face.weight)),\"box\":[\(box)],\"landmarks\":[\(landmarks)]}"
            }
            text += "]}"
        }
        return text + "]}"
    }

    static func quoted(_ string: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [string])) ?? Data("[\"\"]".utf8)
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
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

    func record(_ frame: EffectFrame, on recorder: CommandRecorder) throws -> FrameChange {
        try segmenter.record(on: recorder, image: frame.input, into: nil)
        if maskOnly {
            overlay.recordMask(on: recorder, mask: segmenter.lowResolutionMask, output: frame.output)
        } else {
            try overlay.record(on: recorder, input: frame.input, output: frame.output, faces: faces[frame.index] ?? [],
                               mask: segmenter.lowResolutionMask)
        }
        return .whole
    }
}
