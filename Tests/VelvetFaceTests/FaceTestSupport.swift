import Foundation
import VelvetFace
import VelvetGPU
import XCTest

/// Paths, fixtures and GPU helpers the face tests share.
enum FaceTestSupport {
    /// <repo>: this file is <repo>/Tests/VelvetFaceTests/FaceTestSupport.swift.
    static var repository: URL {
        URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    static var models: FaceModelFiles {
        if let dir = ProcessInfo.processInfo.environment["VELVET_MODELS_DIR"], !dir.isEmpty {
            return FaceModelFiles(directory: URL(fileURLWithPath: dir, isDirectory: true))
        }
        return FaceModelFiles(directory: repository.appendingPathComponent("models", isDirectory: true))
    }

    static var assets: URL {
        if let dir = ProcessInfo.processInfo.environment["VELVET_TEST_ASSETS"], !dir.isEmpty {
            return URL(fileURLWithPath: dir, isDirectory: true)
        }
        return repository.appendingPathComponent("test-assets", isDirectory: true)
    }

    /// A test asset's path; fails the test (never skips) when it is missing.
    static func asset(_ name: String, fetchedBy script: String = "Tools/fetch-test-assets.sh",
                      file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let path = assets.appendingPathComponent(name).path
        guard FileManager.default.fileExists(atPath: path) else {
            XCTFail("test asset \(path) is missing: run \(script)", file: file, line: line)
            throw CocoaError(.fileNoSuchFile)
        }
        return path
    }

    /// A photo's raw RGBA8 pixels (exactly what the MediaPipe fixtures were made from).
    static func rawPhoto(_ name: String) throws -> (pixels: [UInt8], width: Int, height: Int) {
        let size = try String(contentsOfFile: try asset(name + ".size"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "x").compactMap { Int($0) }
        let pixels = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try asset(name + ".rgba"))))
        guard size.count == 2, pixels.count == size[0] * size[1] * 4 else { throw CocoaError(.fileReadCorruptFile) }
        return (pixels, size[0], size[1])
    }

    /// Uploads RGBA8 pixels into a new rgba8 image.
    static func image(_ pixels: [UInt8], width: Int, height: Int, context: GPUContext) throws -> GPUImage {
        let image = try GPUImage(context: context, width: width, height: height, format: .rgba8)
        let recorder = try CommandRecorder(context: context)
        try pixels.withUnsafeBytes { try recorder.upload($0, to: image) }
        try recorder.submit().wait()
        return image
    }

    static func photo(_ name: String, context: GPUContext) throws -> GPUImage {
        let raw = try rawPhoto(name)
        return try image(raw.pixels, width: raw.width, height: raw.height, context: context)
    }

    /// The first channel of an r16f/r32f image as floats, rows top to bottom.
    static func channel(_ image: GPUImage) throws -> [Float] {
        let recorder = try CommandRecorder(context: image.context)
        let readback = try recorder.download(image)
        try recorder.submit().wait()
        let raw = readback.raw
        let count = image.width * image.height
        switch image.format {
        case .r16f: return (0..<count).map { Float(raw.loadUnaligned(fromByteOffset: $0 * 2, as: Float16.self)) }
        case .r32f: return (0..<count).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: Float.self) }
        default: throw CocoaError(.fileReadUnsupportedScheme)
        }
    }

    static func mean(_ values: [Float]) -> Float { values.isEmpty ? .nan : values.reduce(0, +) / Float(values.count) }

    static func distance(_ a: SIMD2<Float>, _ b: SIMD2<Float>) -> Float {
        let d = a - b
        return (d * d).sum().squareRoot()
    }

    /// Mean distance between two meshes, over the reference's inter-ocular distance.
    static func meanError(_ mesh: [SIMD2<Float>], reference: [SIMD2<Float>]) -> Float {
        let iod = distance(reference[33], reference[263])
        return mean(zip(mesh, reference).map { distance($0, $1) }) / iod
    }
}

/// MediaPipe 0.10.21's outputs on the test photos (Tools/make-face-fixtures.py and
/// Tools/make-tracker-fixtures.py).
struct MediaPipeFixture {
    struct Detection: Decodable {
        var score: Float
        var box: [Float]
        var keypoints: [[Float]]
    }

    var width: Int
    var height: Int
    var landmarks: [[SIMD2<Float>]]
    var detections: [String: [Detection]]
    /// prob > 0.5 per pixel, rows top to bottom.
    var personMask: [Bool]

    private struct FaceFile: Decodable {
        struct Face: Decodable { var landmarks: [[Float]] }
        var width: Int
        var height: Int
        var faces: [Face]
    }

    private struct TrackerFile: Decodable {
        struct Mask: Decodable { var rows: [[Int]] }
        var width: Int
        var height: Int
        var detections: [String: [Detection]]
        var person_mask: Mask
    }

    init(_ name: String) throws {
        let directory = FaceTestSupport.repository.appendingPathComponent("Tests/Fixtures")
        let face = try JSONDecoder().decode(FaceFile.self, from: Data(contentsOf: directory.appendingPathComponent("\(name).face.json")))
        let tracker = try JSONDecoder().decode(TrackerFile.self,
                                               from: Data(contentsOf: directory.appendingPathComponent("\(name).tracker.json")))
        width = face.width
        height = face.height
        landmarks = face.faces.map { $0.landmarks.map { SIMD2($0[0], $0[1]) } }
        detections = tracker.detections
        var mask = [Bool](repeating: false, count: width * height)
        for (row, runs) in tracker.person_mask.rows.enumerated() {
            for pair in stride(from: 0, to: runs.count - 1, by: 2) {
                for x in runs[pair]..<runs[pair + 1] { mask[row * width + x] = true }
            }
        }
        personMask = mask
    }
}
