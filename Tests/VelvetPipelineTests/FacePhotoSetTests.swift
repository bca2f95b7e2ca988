import Foundation
import VelvetBeauty
import VelvetFace
import VelvetTestSupport
import XCTest

/// The face photo set (Tools/test-photos.tsv: photographs of people with a free licence from
/// Debian and PyPI packages, fetched by Tools/setup.sh --assets) through the command line
/// with the product's defaults: the default preset, the default detector. docs/QUALITY.md
/// shows the figures per face.
final class FacePhotoSetTests: XCTestCase {
    private static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    private static let environment = ["VELVET_VALIDATION": "1",
                                      "VELVET_MODELS_DIR": repository.appendingPathComponent("models").path]

    /// Every photo of the set; a missing one fails (the set is part of the test command's setup).
    private func photos() throws -> [String] {
        let manifest = try String(contentsOf: Self.repository.appendingPathComponent("Tools/test-photos.tsv"), encoding: .utf8)
        let assets = ProcessInfo.processInfo.environment["VELVET_TEST_ASSETS"]
            ?? Self.repository.appendingPathComponent("test-assets").path
        return try manifest.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }.map { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            let name = String(fields[0]), member = String(fields[3])
            let path = "\(assets)/photos/\(name).\(member.split(separator: ".").last!)"
            guard FileManager.default.fileExists(atPath: path) else {
                throw FixtureMissing(path: path)
            }
            return path
        }
    }

    struct FixtureMissing: Error, CustomStringConvertible {
        let path: String
        var description: String { "\(path) is missing: run Tools/setup.sh --assets" }
    }

    private func velvet(_ arguments: [String]) throws -> [String: Any] {
        let result = try Tool.run(Tool.velvet, arguments, environment: Self.environment)
        XCTAssertEqual(result.status, 0, "velvet \(arguments.joined(separator: " ")): \(result.stderr)")
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: result.output) as? [String: Any])
    }

    /// Each photo as an RGB PNG (the pixels both the render and the metrics read) and its
    /// faces found by the default `velvet analyze`, made once per test process: the M16 and M3
    /// tests both need them, and each analysis of a still is a full search.
    // XCTest runs one test method at a time, so the cache needs no lock.
    nonisolated(unsafe) private static var prepared: [String: (png: String, faces: [[SIMD2<Float>]])] = [:]
    private static let preparedDirectory = FileManager.default.temporaryDirectory
        .appendingPathComponent("velvet-photo-set-\(ProcessInfo.processInfo.processIdentifier)")

    override class func tearDown() {
        try? FileManager.default.removeItem(at: preparedDirectory)
        super.tearDown()
    }

    private func prepared(_ photo: String) throws -> (png: String, faces: [[SIMD2<Float>]]) {
        if let known = Self.prepared[photo] { return known }
        try FileManager.default.createDirectory(at: Self.preparedDirectory, withIntermediateDirectories: true)
        let png = Self.preparedDirectory.appendingPathComponent("\(Self.prepared.count).png").path
        try Tool.ffmpeg(["-i", photo, "-pix_fmt", "rgb24", png])
        let made = (png: png, faces: try faces(png))
        Self.prepared[photo] = made
        return made
    }

    /// Landmark boxes per photo from `velvet analyze`.
    private func faces(_ photo: String, detector: [String] = []) throws -> [[SIMD2<Float>]] {
        let json = try velvet(["analyze", photo, "--json", "--quiet"] + detector)
        let faces = try XCTUnwrap((json["frames"] as? [[String: Any]])?.first?["faces"] as? [[String: Any]])
        return try faces.map { try XCTUnwrap($0["landmarks"] as? [[Double]]).map { SIMD2(Float($0[0]), Float($0[1])) } }
    }

    /// M16 on real photos: the default policy finds every face MediaPipe's full-range model
    /// finds (Velvet's `--detector full` is that model, box for box), and never fewer faces.
    func testEveryFaceTheFullRangeModelFindsIsFound() throws {
        var totals = (auto: 0, full: 0)
        for photo in try photos() {
            let (png, found) = try prepared(photo)
            let auto = found.map { FaceBox(bounding: $0) }
            let full = try faces(png, detector: ["--detector", "full", "--max-faces", "64"]).map { FaceBox(bounding: $0) }
            let recall = QualityMetrics.facesFound(found: auto, present: full)
            print("[M16] \(URL(fileURLWithPath: photo).lastPathComponent): default \(auto.count), full range \(full.count), "
                  + "of those found \(recall.found)")
            XCTAssertEqual(recall.found, full.count, "\(photo): every face the full-range model finds")
            totals.auto += auto.count
            totals.full += full.count
        }
        print("[M16] photo set: default policy \(totals.auto) faces, full-range model \(totals.full)")
    }

    /// M3 with every effect of the default preset on (makeup, reshape and the colour grade
    /// through the skin too): nothing farther than 1 IOD outside a face oval changes.
    func testBackgroundIsUntouchedAtTheDefaultPreset() throws {
        let scratch = try Scratch()
        for photo in try photos() {
            let (input, found) = try prepared(photo)
            let output = scratch.path("out.png")
            let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--quiet", "-y"], environment: Self.environment)
            XCTAssertEqual(result.status, 0, result.stderr)
            let size = try Tool.probe(input, "stream=width,height").split(separator: ",").compactMap { Int($0) }
            let before = try rgba(input), after = try rgba(output)
            let geometry = try found.map { try BeautyFace(landmarks: $0) }
            let m3 = QualityMetrics.backgroundDifference(input: before, output: after, width: size[0], height: size[1], faces: geometry)
            XCTAssertEqual(m3 ?? 0, 0, "\(photo): M3 background bit-exact")
        }
    }

    /// One face's figures from `velvet bench quality --json`.
    struct Figures {
        var iod: Double, m4: Double, m5: Double, m6: Double, m8: Double?
        var box: [Double]
    }

    private func quality(_ photos: [String], _ options: [String]) throws -> [String: [Figures]] {
        let json = try velvet(["bench", "quality"] + photos + ["--json"] + options)
        var result: [String: [Figures]] = [:]
        for photo in try XCTUnwrap(json["photos"] as? [[String: Any]]) {
            let faces = try XCTUnwrap(photo["faces"] as? [[String: Any]]).map { face in
                Figures(iod: face["iod"] as? Double ?? 0, m4: face["M4_features_ssim"] as? Double ?? 0,
                        m5: face["M5_mid_band_ratio"] as? Double ?? .nan, m6: face["M6_fine_band_ratio"] as? Double ?? .nan,
                        m8: face["M8_colour_shift_de2000"] as? Double, box: face["box"] as? [Double] ?? [])
            }
            result[try XCTUnwrap(photo["path"] as? String)] = faces
        }
        return result
    }

    /// At the default preset, both methods, on every face: features kept (M4 >= 0.98); the
    /// blotch band down to 0.5 (M5), or as far as full strength takes it (the strength fit's
    /// contract: where the smoothing cannot reach the target, the default does all it can);
    /// pores kept (M6 >= 0.6, frequency separation) and the cheeks' colour kept (M8 <= 1)
    /// where those bands and discs are resolved: IOD of 40 px and more (below, the fine band
    /// is finer than a pixel and a cheek disc holds under 60 pixels), both cheek discs in the frame.
    func testDefaultPresetOnEveryFace() throws {
        let photos = try photos()
        for method in ["freqsep", "bilateral"] {
            let natural = try quality(photos, ["--smoothing", method])
            // Full strength only where the default misses the bar.
            let short = natural.filter { $0.value.contains { !($0.m5 <= 0.5) } }.keys.sorted()
            let full = short.isEmpty ? [:] : try quality(short, ["--smoothing", method, "--strength", "1"])
            for (photo, faces) in natural.sorted(by: { $0.key < $1.key }) {
                let name = "\(URL(fileURLWithPath: photo).lastPathComponent) \(method)"
                for (index, face) in faces.enumerated() {
                    let label = "\(name) face \(index + 1) (IOD \(Int(face.iod)))"
                    XCTAssertGreaterThanOrEqual(face.m4, 0.98, "\(label): M4 features kept")
                    let fullM5 = full[photo]?[index].m5 ?? .nan
                    XCTAssertTrue(face.m5 <= 0.5 || face.m5 <= fullM5 + 0.02,
                                  "\(label): M5 \(face.m5) should reach 0.5 or full strength's \(fullM5)")
                    guard face.iod >= 40 else { continue }
                    if method == "freqsep" { XCTAssertGreaterThanOrEqual(face.m6, 0.6, "\(label): M6 pores kept") }
                    if let m8 = face.m8, try cheeksInFrame(photo, face: face) {
                        XCTAssertLessThanOrEqual(m8, 1.0, "\(label): M8 colour kept")
                    }
                }
            }
        }
    }

    /// Whether both cheek discs (0.12 IOD around points 50 and 280) lie in the frame: judged
    /// from the face's box grown by the disc radius.
    private func cheeksInFrame(_ photo: String, face: Figures) throws -> Bool {
        let size = try Tool.probe(photo, "stream=width,height").split(separator: ",").compactMap { Double($0) }
        guard face.box.count == 4, size.count == 2 else { return false }
        let margin = 0.12 * face.iod
        return face.box[0] - margin >= 0 && face.box[1] - margin >= 0
            && face.box[0] + face.box[2] + margin <= size[0] && face.box[1] + face.box[3] + margin <= size[1]
    }

    private func rgba(_ path: String) throws -> [UInt8] {
        let raw = path + ".rgba"
        try Tool.ffmpeg(["-i", path, "-f", "rawvideo", "-pix_fmt", "rgba", raw])
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
    }
}
