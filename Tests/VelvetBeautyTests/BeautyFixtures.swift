import Foundation
import VelvetBeauty
import VelvetGPU
import XCTest

/// A test photo with MediaPipe 0.10.21's face mesh and person mask for it
/// (Tests/Fixtures/<name>.face.json, written by Tools/make-face-fixtures.py; the photo
/// itself comes from Tools/fetch-test-assets.sh and is never committed).
struct FaceFixture {
    let name: String
    let width: Int
    let height: Int
    let faces: [BeautyFace]
    let personMask: PlaneImage
    let rgba: [UInt8]

    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static var assetsDirectory: URL {
        if let path = ProcessInfo.processInfo.environment["VELVET_TEST_ASSETS"] { return URL(fileURLWithPath: path) }
        return repositoryRoot.appendingPathComponent("test-assets")
    }

    /// Where tests write images to look at.
    static var outputDirectory: URL {
        let base = ProcessInfo.processInfo.environment["VELVET_TEST_OUTPUT"] ?? "/tmp/velvet-test-output"
        let url = URL(fileURLWithPath: base).appendingPathComponent("beauty")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The geometry only (no photo needed): faces and person mask, with an empty image.
    static func loadGeometry(_ name: String) throws -> FaceFixture { try load(name, withPhoto: false) }

    static func load(_ name: String, withPhoto: Bool = true) throws -> FaceFixture {
        let jsonURL = repositoryRoot.appendingPathComponent("Tests/Fixtures/\(name).face.json")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: jsonURL)) as! [String: Any]
        let width = json["width"] as! Int, height = json["height"] as! Int
        let faces = try (json["faces"] as! [[String: Any]]).map { face in
            try BeautyFace(landmarks: (face["landmarks"] as! [[Double]]).map { SIMD2(Float($0[0]), Float($0[1])) })
        }
        let mask = json["person_mask"] as! [String: Any]
        let maskBytes = [UInt8](Data(base64Encoded: mask["data"] as! String)!)
        let personMask = PlaneImage(width: mask["width"] as! Int, height: mask["height"] as! Int,
                                    values: maskBytes.map { Float($0) / 255 })
        guard withPhoto else {
            return FaceFixture(name: name, width: width, height: height, faces: faces, personMask: personMask, rgba: [])
        }
        let rgbaURL = assetsDirectory.appendingPathComponent("\(name).rgba")
        guard let data = FileManager.default.contents(atPath: rgbaURL.path), data.count == width * height * 4 else {
            throw FixtureError("\(rgbaURL.path) is missing or has the wrong size: run Tools/fetch-test-assets.sh")
        }
        return FaceFixture(name: name, width: width, height: height, faces: faces, personMask: personMask, rgba: [UInt8](data))
    }

    var rgb: RGBImage { try! RGBImage(rgba8: rgba, width: width, height: height) }
}

struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension BeautySettings {
    /// Spot removal alone, at full strength.
    static var spotsAlone: BeautySettings {
        var settings = BeautySettings.off
        settings.spotRemoval = 1
        return settings
    }
}

/// Results of one pipeline run, downloaded.
struct PipelineRun {
    let output: [UInt8]
    let weights: [Float]
    let processed: RGBImage?
    let mask: [SIMD4<Float>]
    let maskWidth: Int
    let maskHeight: Int
    /// The skin stages' region and the part the blend may change (`SkinFrame`).
    let region: PixelRegion
    let changed: PixelRegion
    let timings: GPUTimings
}

enum PipelineRunner {
    /// Runs the skin stage and the sharpen after it once on an RGBA8 frame, through the chain.
    static func run(context: GPUContext, pipeline: SkinPipeline? = nil, rgba: [UInt8], width: Int, height: Int,
                    faces: [BeautyFace], personMask: PlaneImage?, settings: BeautySettings) throws -> PipelineRun {
        let pipeline = try pipeline ?? SkinPipeline(context: context)
        pipeline.capturesWeights = true
        let image = try GPUImage(context: context, width: width, height: height, format: .rgba8)
        var person: GPUImage? = nil
        let recorder = try CommandRecorder(context: context)
        try rgba.withUnsafeBytes { try recorder.upload($0, to: image) }
        if let personMask {
            let maskImage = try GPUImage(context: context, width: personMask.width, height: personMask.height, format: .r32f)
            try personMask.values.withUnsafeBytes { try recorder.upload($0, to: maskImage) }
            person = maskImage
        }
        let stageFrame = StageFrame(input: image, faces: faces, personMask: person)
        let chain = BeautyChain(context: context, stages: [try SkinStage(pipeline: pipeline, settings: settings),
                                                           try SharpenStage(context: context, amount: settings.sharpen)])
        let outputImage = try GPUImage(context: context, width: width, height: height, format: .rgba8)
        if try chain.record(on: recorder, frame: stageFrame, output: outputImage) == nil { try recorder.copy(image, to: outputImage) }
        let frame = try XCTUnwrap(stageFrame.skin)
        let output = try recorder.download(outputImage)
        let weights = try recorder.download(frame.weights!)
        let processed = try frame.processed.map { try recorder.download($0) }
        let mask = try frame.mask.map { try recorder.download($0) }
        let timings = try recorder.submit().wait()
        let maskValues = mask.map { halves($0.bytes) } ?? []
        return PipelineRun(
            output: output.bytes, weights: halves(weights.bytes),
            processed: processed.map { readback in
                let values = halves(readback.bytes)
                return RGBImage(width: width, height: height,
                                pixels: (0..<(width * height)).map { SIMD3(values[4 * $0], values[4 * $0 + 1], values[4 * $0 + 2]) })
            },
            mask: stride(from: 0, to: maskValues.count, by: 4).map {
                SIMD4(maskValues[$0], maskValues[$0 + 1], maskValues[$0 + 2], maskValues[$0 + 3])
            },
            maskWidth: frame.mask?.width ?? 0, maskHeight: frame.mask?.height ?? 0, region: frame.region, changed: frame.changed,
            timings: timings)
    }

    static func halves(_ bytes: [UInt8]) -> [Float] {
        stride(from: 0, to: bytes.count, by: 2).map { Float(Float16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)) }
    }
}

enum ImageWriter {
    /// Writes RGBA8 pixels as a PNG through the ffmpeg CLI; returns the path.
    @discardableResult
    static func png(_ rgba: [UInt8], width: Int, height: Int, name: String, scale: Int = 1) throws -> String {
        let directory = FaceFixture.outputDirectory
        let raw = directory.appendingPathComponent("\(name).rgba")
        let png = directory.appendingPathComponent("\(name).png")
        try Data(rgba).write(to: raw)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ffmpeg", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgba", "-s", "\(width)x\(height)",
                             "-i", raw.path, "-vf", "scale=iw*\(scale):ih*\(scale):flags=neighbor", png.path]
        try process.run()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: raw)
        guard process.terminationStatus == 0 else { throw FixtureError("ffmpeg failed writing \(png.path)") }
        return png.path
    }

    /// Crops of the same region from several RGBA8 frames, side by side.
    static func sideBySide(_ frames: [[UInt8]], width: Int, region: PixelRegion) -> [UInt8] {
        var result: [UInt8] = []
        for row in region.y..<(region.y + region.height) {
            for frame in frames {
                let start = (row * width + region.x) * 4
                result += frame[start..<(start + region.width * 4)]
            }
        }
        return result
    }
}
