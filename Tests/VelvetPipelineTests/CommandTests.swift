import Foundation
import VelvetTestSupport
import XCTest

/// The commands without a render of their own: `analyze`, `devices` and short, bounded runs
/// of every `bench` subcommand, each checked for the fields docs/CLI.md lists.
final class CommandTests: XCTestCase {
    private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    private var photo: String { repository.appendingPathComponent("test-assets/grace_hopper.jpg").path }

    private func velvet(_ arguments: [String], status: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) throws -> Tool.Result {
        let result = try Tool.run(Tool.velvet, arguments, environment: ["VELVET_VALIDATION": "1",
                                                                        "VELVET_MODELS_DIR": repository.appendingPathComponent("models").path])
        XCTAssertEqual(result.status, status, "velvet \(arguments.joined(separator: " ")): \(result.stderr)", file: file, line: line)
        return result
    }

    private func json(_ result: Tool.Result, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let text = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], result.stdout, file: file, line: line)
    }

    private func assertKeys(_ object: [String: Any], _ keys: [String], file: StaticString = #filePath, line: UInt = #line) {
        for key in keys { XCTAssertNotNil(object[key], "\(key) in \(object.keys.sorted())", file: file, line: line) }
    }

    func testAnalyzeJSONOverlayAndExitCodes() throws {
        let scratch = try Scratch()
        let input = scratch.path("grace.png")
        try Tool.ffmpeg(["-i", photo, "-vf", "scale=256:-2", input])
        let result = try velvet(["analyze", input, "--json", "--overlay", scratch.path("overlay.png")])
        let report = try json(result)
        XCTAssertEqual(report["input"] as? String, input)
        XCTAssertEqual(report["width"] as? Int, 256)
        let frames = try XCTUnwrap(report["frames"] as? [[String: Any]])
        XCTAssertEqual(frames.count, 1)
        assertKeys(frames[0], ["frame", "time", "faces"])
        let face = try XCTUnwrap((frames[0]["faces"] as? [[String: Any]])?.first, "a face in the photo")
        assertKeys(face, ["track", "score", "held", "weight", "box", "landmarks"])
        XCTAssertEqual(face["held"] as? Int, 0, "a still's face is seen")
        XCTAssertEqual(face["weight"] as? Double, 1)
        XCTAssertEqual((face["box"] as? [Double])?.count, 4)
        let landmarks = try XCTUnwrap(face["landmarks"] as? [[Double]])
        XCTAssertEqual(landmarks.count, 468)
        XCTAssertTrue(landmarks.allSatisfy { $0.count == 3 })
        XCTAssertEqual(try Tool.probe(scratch.path("overlay.png"), "stream=width,height"), try Tool.probe(input, "stream=width,height"))
        XCTAssertNotEqual(try Tool.pixels(scratch.path("overlay.png"), "rgb24"), try Tool.pixels(input, "rgb24"), "the mesh is drawn")

        let text = try velvet(["analyze", input])
        XCTAssertTrue(text.stdout.hasPrefix("frame 0 (0.000 s): 1 face(s): #1 score"), text.stdout)
        _ = try velvet(["analyze", scratch.path("missing.png")], status: 1)
        _ = try velvet(["analyze", input, "--detector", "sideways"], status: 2)
        _ = try velvet(["analyze", input, "--overlay", scratch.path("overlay.png")], status: 1) // exists, no -y
        _ = try velvet(["analyze", input, "--overlay", scratch.path("overlay.png"), "-y"])
        XCTAssertEqual(scratch.files, ["grace.png", "overlay.png"], "no scratch or partial files left")
    }

    func testDevicesListsLavapipeAndMarksTheChosenOne() throws {
        let text = try velvet(["devices"])
        let lines = text.stdout.split(separator: "\n")
        XCTAssertTrue(lines.contains { $0.hasPrefix("* ") && $0.contains("llvmpipe") && $0.contains("[cpu]") }, text.stdout)
        XCTAssertTrue(lines.last?.hasPrefix("velvet would use device ") == true, text.stdout)
        let listed = try XCTUnwrap(try JSONSerialization.jsonObject(with: try velvet(["devices", "--json", "--device", "0"]).output) as? [[String: Any]])
        let first = try XCTUnwrap(listed.first { $0["index"] as? Int == 0 })
        for key in ["api", "driver", "index", "memoryMiB", "name", "selected", "type"] { XCTAssertNotNil(first[key], key) }
        XCTAssertEqual(first["selected"] as? Bool, true)
        XCTAssertEqual(listed.filter { $0["selected"] as? Bool == true }.count, 1)
        XCTAssertTrue(listed.contains { ($0["name"] as? String ?? "").contains("llvmpipe") && $0["type"] as? String == "cpu" })
        _ = try velvet(["devices", "--device", "99"], status: 2)
    }

    func testBenchBlurSkinNNAndTracker() throws {
        let blur = try json(try velvet(["bench", "blur", "--width", "64", "--height", "48", "--sigma", "2", "--iterations", "2"]))
        assertKeys(blur, ["device", "kind", "width", "height", "sigma", "iterations", "median_ms", "min_ms"])

        let skin = try json(try velvet(["bench", "skin", "--width", "64", "--height", "48", "--iterations", "1"]))
        assertKeys(skin, ["device", "kind", "width", "height", "faces", "iterations", "bilateral", "methods"])
        let methods = try XCTUnwrap(skin["methods"] as? [String: [String: Any]])
        XCTAssertEqual(methods.keys.sorted(), ["bilateral", "freqsep"])
        for method in methods.values { assertKeys(method, ["median_ms", "min_ms", "sections"]) }

        let nn = try json(try velvet(["bench", "nn", "--model", "face_detection_short_range", "--iterations", "1", "--warmup", "0",
                                      "--models", repository.appendingPathComponent("models").path]))
        assertKeys(nn, ["device", "kind", "models"])
        let model = try XCTUnwrap((nn["models"] as? [[String: Any]])?.first)
        assertKeys(model, ["model", "median_ms", "min_ms", "launches", "levels", "arena_bytes", "iterations"])

        let tracker = try json(try velvet(["bench", "tracker", "--input", photo, "--frames", "2", "--warmup", "0"]))
        assertKeys(tracker, ["device", "kind", "width", "height", "frames", "wall_ms_median", "wall_ms_min", "gpu_ms_median",
                             "submissions_per_frame", "faces", "segmentation_model"])
        XCTAssertEqual(tracker["faces"] as? Int, 1)
    }

    func testBenchMediaAndSoak() throws {
        let scratch = try Scratch()
        let media = try velvet(["bench", "media", "--photo", photo, "--frames", "4", "--size", "160x120", "--work-dir", scratch.url.path,
                                "--preset-x264", "ultrafast"])
        XCTAssertTrue(media.stdout.contains("| pipeline | fps |"), media.stdout)
        XCTAssertTrue(media.stdout.contains("| plain transcode") && media.stdout.contains("| Velvet passthrough"), media.stdout)
        XCTAssertTrue(media.stdout.contains("passthrough / plain transcode = "), media.stdout)

        // The soak's growth check, shown failing against a bar no run can meet.
        let arguments = ["bench", "soak", "--photo", photo, "--frames", "10", "--every", "2", "--size", "160x120", "--work-dir", scratch.url.path]
        let soak = try velvet(arguments + ["--max-growth", "-100"], status: 1)
        XCTAssertTrue(soak.stdout.contains("| frame | RSS MiB | GPU memory blocks MiB |"), soak.stdout)
        XCTAssertTrue(soak.stdout.contains("RSS growth after warm-up: "), soak.stdout)
        let last = soak.stderr.split(separator: "\n").last ?? ""
        XCTAssertTrue(last.hasPrefix("velvet: error: resident memory grew ") && last.hasSuffix("above the -100 % bar (--max-growth)"), soak.stderr)
        XCTAssertFalse(scratch.files.contains { $0.hasPrefix(".") }, "no partial files: \(scratch.files)")
    }
}
