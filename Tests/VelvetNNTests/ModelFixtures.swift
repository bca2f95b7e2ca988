import Foundation
import XCTest
import VelvetNN

/// Locates the MediaPipe models: $VELVET_MODELS_DIR, else <repo>/models.
enum ModelFixtures {
    static let names = [
        "face_detection_short_range",
        "face_detection_full_range_sparse",
        "face_landmark",
        "selfie_segmentation",
        "selfie_segmentation_landscape",
    ]

    static var directory: URL {
        if let dir = ProcessInfo.processInfo.environment["VELVET_MODELS_DIR"], !dir.isEmpty {
            return URL(fileURLWithPath: dir, isDirectory: true)
        }
        // This file is <repo>/Tests/VelvetNNTests/ModelFixtures.swift (symlinks
        // resolved, so a scratch package linking the folder finds the repo too).
        return URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("models", isDirectory: true)
    }

    /// The model's URL; fails the test (never skips) when the file is missing.
    static func url(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> URL {
        let url = directory.appendingPathComponent(name + ".tflite")
        guard FileManager.default.fileExists(atPath: url.path) else {
            XCTFail("model \(url.path) is missing: run Tools/fetch-models.sh (or set VELVET_MODELS_DIR)",
                    file: file, line: line)
            throw MissingModel(path: url.path)
        }
        return url
    }

    static func bytes(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: try url(name, file: file, line: line)))
    }

    static func model(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> TFLiteModel {
        try TFLiteModel(contentsOf: try url(name, file: file, line: line))
    }
}

struct MissingModel: Error, CustomStringConvertible {
    let path: String
    var description: String { "missing model \(path); run Tools/fetch-models.sh" }
}
