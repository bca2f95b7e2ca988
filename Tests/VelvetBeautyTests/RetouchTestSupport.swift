import Foundation
import VelvetBeauty
import VelvetFace
import VelvetGPU
import VelvetMedia
import XCTest

/// A real photo as the renderer sees it (ImageLoader's rgba16f working image) with the
/// tracker's faces on it, for the retouch stages' tests.
struct TrackedPhoto {
    let name: String
    let image: GPUImage
    let faces: [BeautyFace]
    let pixels: RGBImage

    static func path(_ name: String) -> String { FaceFixture.assetsDirectory.appendingPathComponent(name).path }

    static var models: FaceModelFiles {
        if let dir = ProcessInfo.processInfo.environment["VELVET_MODELS_DIR"], !dir.isEmpty {
            return FaceModelFiles(directory: URL(fileURLWithPath: dir, isDirectory: true))
        }
        return FaceModelFiles(directory: FaceFixture.repositoryRoot.appendingPathComponent("models", isDirectory: true))
    }

    /// `name` under test-assets/ (a missing photo fails: Tools/setup.sh --assets fetches them).
    static func load(_ name: String, context: GPUContext, tracker: FaceTracker) throws -> TrackedPhoto {
        let file = path(name)
        guard FileManager.default.fileExists(atPath: file) else { throw FixtureError("\(file) is missing: run Tools/setup.sh --assets") }
        let image = try ImageLoader.load(file, context: context)
        let faces = try tracker.process(image).faces.map { try BeautyFace(landmarks: $0.points) }
        return TrackedPhoto(name: name, image: image, faces: faces, pixels: try download(image))
    }

    /// An rgba16f image's colour as metric pixels.
    static func download(_ image: GPUImage) throws -> RGBImage {
        let recorder = try CommandRecorder(context: image.context)
        let readback = try recorder.download(image)
        try recorder.submit().wait()
        let values = PipelineRunner.halves(readback.bytes)
        return RGBImage(width: image.width, height: image.height,
                        pixels: (0..<(image.width * image.height)).map { SIMD3(values[4 * $0], values[4 * $0 + 1], values[4 * $0 + 2]) })
    }

    /// The photo through a chain of `stages`: the output's pixels, and what the chain says changed.
    func render(_ stages: [any BeautyStage], context: GPUContext) throws -> (pixels: RGBImage, changed: PixelRegion?, stages: Int) {
        let chain = BeautyChain(context: context, stages: stages)
        let output = try GPUImage(context: context, width: image.width, height: image.height, format: image.format)
        let recorder = try CommandRecorder(context: context)
        let changed = try chain.record(on: recorder, frame: StageFrame(input: image, faces: faces, personMask: nil), output: output)
        if changed == nil { try recorder.copy(image, to: output) } // nothing changed: the render keeps the input
        try recorder.submit().wait()
        return (try Self.download(output), changed, chain.stages.count)
    }

    /// Writes input | output side by side, cropped around `points`, to the test output folder.
    func picture(_ output: RGBImage, around points: [SIMD2<Float>], name: String) throws {
        let low = points.reduce(SIMD2<Float>(repeating: .infinity)) { pointwiseMin($0, $1) } - 8
        let high = points.reduce(SIMD2<Float>(repeating: -.infinity)) { pointwiseMax($0, $1) } + 8
        let x0 = max(0, Int(low.x)), y0 = max(0, Int(low.y))
        let region = PixelRegion(x: x0, y: y0, width: min(output.width, Int(high.x)) - x0, height: min(output.height, Int(high.y)) - y0)
        let a = pixels.cropped(to: region), b = output.cropped(to: region)
        var bytes: [UInt8] = []
        for row in 0..<region.height {
            for image in [a, b] {
                for column in 0..<region.width {
                    let p = image.pixels[row * region.width + column]
                    bytes += [p.x, p.y, p.z].map { UInt8((min(max($0, 0), 1) * 255).rounded()) } + [255]
                }
            }
        }
        let directory = FaceFixture.outputDirectory.deletingLastPathComponent().appendingPathComponent("retouch")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try ImageWriter.png(bytes, width: 2 * region.width, height: region.height, name: "../retouch/" + name, scale: 2)
    }
}
