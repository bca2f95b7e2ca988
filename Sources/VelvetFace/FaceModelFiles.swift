import Foundation

/// The MediaPipe 0.10.21 models the tracker runs (Tools/fetch-models.sh extracts them
/// from the PyPI wheel).
public enum FaceModelName: String, CaseIterable, Sendable {
    case shortRangeDetector = "face_detection_short_range"
    case fullRangeDetector = "face_detection_full_range_sparse"
    case mesh = "face_landmark"
    case selfie = "selfie_segmentation"
    case selfieLandscape = "selfie_segmentation_landscape"
}

/// Where the model files are: a directory holding `<name>.tflite`.
public struct FaceModelFiles: Sendable, Equatable {
    public var directory: URL

    public init(directory: URL) {
        self.directory = directory
    }

    /// $VELVET_MODELS_DIR; else ./models; else the `models` folder of the checkout the
    /// running binary was built in (`<repo>/.build/<config>/velvet`), so the tool works from
    /// any directory after `Tools/setup.sh`.
    public static var standard: FaceModelFiles {
        if let dir = ProcessInfo.processInfo.environment["VELVET_MODELS_DIR"], !dir.isEmpty {
            return FaceModelFiles(directory: URL(fileURLWithPath: dir, isDirectory: true))
        }
        let local = URL(fileURLWithPath: "models", isDirectory: true)
        let marker = FaceModelName.mesh.rawValue + ".tflite"
        if FileManager.default.fileExists(atPath: local.appendingPathComponent(marker).path) { return FaceModelFiles(directory: local) }
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent("models", isDirectory: true)
            if FileManager.default.fileExists(atPath: candidate.appendingPathComponent(marker).path) {
                return FaceModelFiles(directory: candidate)
            }
            folder = folder.deletingLastPathComponent()
        }
        return FaceModelFiles(directory: local)
    }

    /// Where the file of `model` is, or would be.
    public func expectedURL(_ model: FaceModelName) -> URL { directory.appendingPathComponent(model.rawValue + ".tflite") }

    /// The file of `model`; throws when it is missing.
    public func url(_ model: FaceModelName) throws -> URL {
        let url = expectedURL(model)
        guard FileManager.default.fileExists(atPath: url.path) else { throw FaceError.missingModel(path: url.path) }
        return url
    }
}
