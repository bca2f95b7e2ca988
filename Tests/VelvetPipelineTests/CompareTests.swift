import Foundation
import VelvetTestSupport
import XCTest

/// `velvet compare`: the A/B video, the metrics JSON and the HTML report, which a real
/// browser (headless Chromium) must render with its images and no console errors.
final class CompareTests: XCTestCase {
    private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func testCompareWritesVideoMetricsAndAReportThatRenders() throws {
        let scratch = try Scratch()
        try makeClip(scratch)
        let result = try Tool.run(Tool.velvet, ["compare", scratch.path("demo/before.mp4"), "--a", "bilateral", "--b", "freqsep",
                                                "-o", scratch.path("ab.mp4"), "--report", scratch.path("ab.html"), "--quiet"],
                                  environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try Tool.probe(scratch.path("ab.mp4"), "stream=width,height,nb_frames"), "320,180,4")

        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: scratch.path("ab.json")))) as? [String: Any])
        for side in ["A", "B"] {
            let entry = try XCTUnwrap(json[side] as? [String: Any])
            let metrics = try XCTUnwrap(entry["metrics"] as? [String: Any])
            for key in ["M4_features_ssim", "M5_mid_band_ratio", "M6_fine_band_ratio", "M7_halo_p99", "M8_colour_shift_de2000"] {
                XCTAssertNotNil(metrics[key] as? Double, "\(side) \(key)")
            }
            // M15 over the 4 frames: the key for (a) is there (null: the demo never repeats its face),
            // (b) is computable, and every frame with the face got the effect.
            XCTAssertTrue(metrics.keys.contains("M15a_still_change_levels"), side)
            XCTAssertNotNil(metrics["M15b_change_ratio"] as? Double, side)
            XCTAssertEqual(metrics["M15c_frames_without_beauty"] as? Double, 0, side)
            XCTAssertEqual((entry["M15_frames"] as? [String: Int])?["all"], 4, side)
            XCTAssertNotNil((entry["gpu_ms_per_frame"] as? [String: Double])?["skin.smoothing"])
        }
        XCTAssertEqual((json["A"] as? [String: Any])?["method"] as? String, "bilateral")
        XCTAssertNil((json["A"] as? [String: Any])?["preset"], "two methods compare no presets")

        let html = try String(contentsOfFile: scratch.path("ab.html"), encoding: .utf8)
        XCTAssertFalse(html.contains("http://") || html.contains("https://") || html.contains("<script"), "self-contained, no scripts")
        XCTAssertEqual(html.components(separatedBy: "data:image/png;base64,").count - 1, 19, "3 results x (1 + 4 crops) + 2 heat maps + 2 masks")

        // Open it in headless Chromium: it must draw the images, and log no console errors.
        let chromium = "/usr/bin/chromium"
        guard FileManager.default.isExecutableFile(atPath: chromium) else { return XCTFail("chromium is missing: run Tools/setup.sh --browser") }
        let shot = scratch.path("report.png")
        let browser = try Tool.run(chromium, ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1200,1600",
                                              "--screenshot=\(shot)", "--enable-logging=stderr", "--v=0", "file://" + scratch.path("ab.html")])
        XCTAssertEqual(browser.status, 0, browser.stderr)
        XCTAssertFalse(browser.stderr.contains("CONSOLE"), "console messages: \(browser.stderr)")
        // Not blank: the screenshot has many distinct colours (a blank page has one or two).
        let pixels = try Tool.pixels(shot, "rgb24")
        var colours = Set<UInt32>()
        for index in stride(from: 0, to: pixels.count - 2, by: 3 * 7) {
            colours.insert(UInt32(pixels[index]) << 16 | UInt32(pixels[index + 1]) << 8 | UInt32(pixels[index + 2]))
        }
        XCTAssertGreaterThan(colours.count, 1000, "the report's images must render")
    }

    /// `--a-preset` / `--b-preset` (a built-in name, a preset file): each side runs its whole
    /// preset, the JSON names it, and the sides differ where the presets do.
    /// An image sequence output gets its report and metrics beside it (`ab_%03d.png` ->
    /// `ab.html`, `ab.json`): they were named on stdout and never written. A run with no face
    /// and `-y` takes away an earlier run's report and metrics, which no longer match the video.
    func testSequenceOutputsGetTheirReportAndNoFaceTakesAnEarliersAway() throws {
        let scratch = try Scratch()
        let photo = repository.appendingPathComponent("test-assets/grace_hopper.jpg").path
        let clip = scratch.path("clip.mp4"), noFace = scratch.path("noface.mp4")
        try Tool.ffmpeg(["-loop", "1", "-i", photo, "-vf", "scale=240:-2", "-frames:v", "2", "-r", "10", "-pix_fmt", "yuv420p", clip])
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=160x120:rate=10", "-frames:v", "2", "-pix_fmt", "yuv420p", noFace])
        try FileManager.default.createDirectory(atPath: scratch.path("seq"), withIntermediateDirectories: true)
        let sequence = try Tool.run(Tool.velvet, ["compare", clip, "-o", scratch.path("seq/ab_%03d.png"), "--quiet"], environment: environment)
        XCTAssertEqual(sequence.status, 0, sequence.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path("seq")).sorted(),
                       ["ab.html", "ab.json", "ab_001.png", "ab_002.png"])
        XCTAssertNoThrow(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: scratch.path("seq/ab.json")))))
        try FileManager.default.createDirectory(atPath: scratch.path("v"), withIntermediateDirectories: true)
        XCTAssertEqual(try Tool.run(Tool.velvet, ["compare", clip, "-o", scratch.path("v/ab.mp4"), "--quiet"], environment: environment).status, 0)
        let none = try Tool.run(Tool.velvet, ["compare", noFace, "-o", scratch.path("v/ab.mp4"), "-y", "--quiet"], environment: environment)
        XCTAssertEqual(none.status, 1)
        XCTAssertTrue(none.stderr.contains("of an earlier run removed"), none.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path("v")), ["ab.mp4"])
    }

    func testCompareTwoPresets() throws {
        let scratch = try Scratch()
        try makeClip(scratch)
        let glam = try Tool.run(Tool.velvet, ["presets", "show", "glam"], environment: environment)
        XCTAssertEqual(glam.status, 0, glam.stderr)
        try glam.output.write(to: URL(fileURLWithPath: scratch.path("glam.json")))
        let result = try Tool.run(Tool.velvet, ["compare", scratch.path("demo/before.mp4"), "--a-preset", "natural",
                                                "--b-preset", scratch.path("glam.json"), "-o", scratch.path("ab.mp4"), "--quiet"],
                                  environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: scratch.path("ab.json")))) as? [String: Any])
        let a = try XCTUnwrap(json["A"] as? [String: Any]), b = try XCTUnwrap(json["B"] as? [String: Any])
        XCTAssertEqual(a["preset"] as? String, "natural")
        XCTAssertEqual(b["preset"] as? String, scratch.path("glam.json"))
        XCTAssertEqual(a["method"] as? String, "freqsep")
        XCTAssertEqual(b["method"] as? String, "freqsep")
        // Every stage of each preset ran, not only the skin: both have makeup, grade and reshape;
        // only glam sharpens.
        let timingsA = try XCTUnwrap(a["gpu_ms_per_frame"] as? [String: Double]), timingsB = try XCTUnwrap(b["gpu_ms_per_frame"] as? [String: Double])
        for section in ["skin.smoothing", "grade", "makeup", "reshape"] {
            XCTAssertNotNil(timingsA[section], "natural: \(section)")
            XCTAssertNotNil(timingsB[section], "glam: \(section)")
        }
        XCTAssertNil(timingsA["skin.sharpen"], "natural does not sharpen")
        XCTAssertNotNil(timingsB["skin.sharpen"], "glam sharpens")
        // Glam smooths harder (strength 1 against 0.5): less of the mid band is left.
        let metricsA = try XCTUnwrap(a["metrics"] as? [String: Any]), metricsB = try XCTUnwrap(b["metrics"] as? [String: Any])
        let m5 = (try XCTUnwrap(metricsA["M5_mid_band_ratio"] as? Double), try XCTUnwrap(metricsB["M5_mid_band_ratio"] as? Double))
        XCTAssertLessThan(m5.1, m5.0, "M5: glam smooths more than natural")
        let html = try String(contentsOfFile: scratch.path("ab.html"), encoding: .utf8)
        XCTAssertTrue(html.contains("A natural (freqsep)"), "the report names side A's preset")
    }

    /// `--a` with `--a-preset`: a usage error before any work.
    func testMethodAndPresetOnOneSideIsAUsageError() throws {
        let scratch = try Scratch()
        let result = try Tool.run(Tool.velvet, ["compare", scratch.path("missing.mp4"), "--a", "bilateral", "--a-preset", "glam",
                                                "-o", scratch.path("ab.mp4")], environment: environment)
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("--a and --a-preset"), result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "one line: \(result.stderr)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.path("ab.mp4")))
    }

    /// Two sides that name their presets read no default preset: a broken default (its LUT
    /// gone) does not fail the comparison, as it does not fail `render --preset`.
    func testTwoNamedPresetsIgnoreABrokenDefault() throws {
        let scratch = try Scratch()
        try makeClip(scratch)
        let config = ["XDG_CONFIG_HOME": scratch.path("config")]
        let lut = scratch.path("gone.cube")
        try "LUT_3D_SIZE 2\n0 0 0\n1 0 0\n0 1 0\n1 1 0\n0 0 1\n1 0 1\n0 1 1\n1 1 1\n".write(toFile: lut, atomically: true, encoding: .utf8)
        XCTAssertEqual(try Tool.run(Tool.velvet, ["presets", "save", "mine", "--lut", lut], environment: config).status, 0)
        XCTAssertEqual(try Tool.run(Tool.velvet, ["presets", "default", "mine"], environment: config).status, 0)
        try FileManager.default.removeItem(atPath: lut)
        let result = try Tool.run(Tool.velvet, ["compare", scratch.path("demo/before.mp4"), "--a-preset", "natural", "--b-preset", "glam",
                                                "-o", scratch.path("ab.mp4"), "--quiet"], environment: environment.merging(config) { $1 })
        XCTAssertEqual(result.status, 0, result.stderr)
        let broken = try Tool.run(Tool.velvet, ["compare", scratch.path("demo/before.mp4"), "--a-preset", "natural",
                                                "-o", scratch.path("ab2.mp4"), "--quiet"], environment: environment.merging(config) { $1 })
        XCTAssertEqual(broken.status, 1, "side B takes the default preset, which is broken")
        XCTAssertTrue(broken.stderr.contains("it is the default preset"), broken.stderr)
    }

    /// With an empty pipeline cache (a fresh machine) the report's GPU work meets kernels
    /// still being compiled, whose cache files are written through the commit lock: the report
    /// is made before that lock is taken (it was made under it, and compare hung for good, deaf
    /// to SIGTERM).
    func testCompareFinishesWithAnEmptyPipelineCache() throws {
        let scratch = try Scratch()
        try makeClip(scratch)
        var fresh = environment
        fresh["XDG_CACHE_HOME"] = scratch.path("cache")
        fresh["VELVET_PIPELINE_CACHE"] = nil
        let result = try Tool.run("timeout", ["-k", "5", "240", Tool.velvet, "compare", scratch.path("demo/before.mp4"),
                                              "-o", scratch.path("ab.mp4"), "--quiet"], environment: fresh)
        XCTAssertEqual(result.status, 0, "finished, not hung: \(result.stderr)")
        for file in ["ab.mp4", "ab.json", "ab.html"] { XCTAssertTrue(FileManager.default.fileExists(atPath: scratch.path(file)), file) }
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: scratch.path("cache/velvet/pipelines")).isEmpty, "the cache was written")
    }

    /// The video, the metrics and the report are moved into place together: a report that
    /// does not fit on its disk leaves none of the three (the video and the metrics stayed).
    func testAFullDiskLeavesNoneOfTheOutputs() throws {
        let scratch = try Scratch()
        try makeClip(scratch)
        let small = scratch.path("small")
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
        // A 40 KiB tmpfs holds the metrics, not the report and its pictures (needs root, as in CI).
        let mount = try Tool.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=40k", "tmpfs", small])
        guard mount.status == 0 else { return XCTFail("cannot mount a small tmpfs (run the tests as root): \(mount.stderr)") }
        defer { _ = try? Tool.run("/usr/bin/umount", [small]) }
        let result = try Tool.run(Tool.velvet, ["compare", scratch.path("demo/before.mp4"), "-o", scratch.path("ab.mp4"),
                                                "--report", small + "/ab.html", "--quiet"], environment: environment)
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("No space left on device"), result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.path("ab.mp4")), "no A/B video without its report")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: small), [], "no metrics, no partial")
        XCTAssertFalse(scratch.files.contains { $0.contains("velvet-partial") }, "\(scratch.files)")
    }

    /// Every face of the captured frame is measured (only the first was: a second face smoothed
    /// to M5 0.5 left the side at M5 1): each side lists its faces, and its figure is the worst
    /// face's. `bench quality`'s median of two faces is their mean (it printed the upper one).
    func testEveryFaceIsMeasured() throws {
        let scratch = try Scratch()
        let assets = repository.appendingPathComponent("test-assets")
        let pair = scratch.path("pair.png")
        try Tool.ffmpeg(["-i", assets.appendingPathComponent("grace_hopper.jpg").path, "-i", assets.appendingPathComponent("astronaut.png").path,
                         "-filter_complex", "[0]scale=-2:360[a];[1]scale=-2:360[b];[a][b]hstack", pair])
        let result = try Tool.run(Tool.velvet, ["compare", pair, "--a", "bilateral", "--b", "freqsep", "-o", scratch.path("ab.mkv"),
                                                "--codec", "ffv1", "--quiet"], environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: scratch.path("ab.json")))) as? [String: Any])
        for side in ["A", "B"] {
            let entry = try XCTUnwrap(json[side] as? [String: Any])
            let metrics = try XCTUnwrap(entry["metrics"] as? [String: Any]), faces = try XCTUnwrap(entry["faces"] as? [[String: Any]])
            XCTAssertEqual(faces.count, 2, side)
            func values(_ key: String) -> [Double] { faces.compactMap { $0[key] as? Double } }
            XCTAssertEqual(metrics["M5_mid_band_ratio"] as? Double, values("M5_mid_band_ratio").max(), side)
            XCTAssertEqual(metrics["M8_colour_shift_de2000"] as? Double, values("M8_colour_shift_de2000").max(), side)
            XCTAssertEqual(metrics["M4_features_ssim"] as? Double, values("M4_features_ssim").min(), side)
            XCTAssertEqual(metrics["M6_fine_band_ratio"] as? Double, values("M6_fine_band_ratio").min(), side)
        }
        let bench = try Tool.run(Tool.velvet, ["bench", "quality", assets.appendingPathComponent("grace_hopper.jpg").path,
                                               assets.appendingPathComponent("astronaut.png").path], environment: environment)
        XCTAssertEqual(bench.status, 0, bench.stderr)
        let line = try XCTUnwrap(bench.stdout.split(separator: "\n").first { $0.hasPrefix("M5 over 2 faces") })
        let numbers = line.split(whereSeparator: { " ,()".contains($0) }).compactMap { Double($0) }
        XCTAssertEqual(numbers.count, 5, String(line)) // 2, min, median, max, spread
        XCTAssertEqual(numbers[2], (numbers[1] + numbers[3]) / 2, accuracy: 0.0011, String(line))
    }

    private var environment: [String: String] {
        ["VELVET_MODELS_DIR": repository.appendingPathComponent("models").path, "VELVET_VALIDATION": "1"]
    }

    /// A short clip with a face, `demo/before.mp4`: the demo's, shortened.
    private func makeClip(_ scratch: Scratch) throws {
        let demo = try Tool.run(Tool.velvet, ["demo", "--output-dir", scratch.path("demo"), "--frames", "4", "--size", "320x180",
                                              "--assets", repository.appendingPathComponent("test-assets").path, "--quiet"], environment: environment)
        XCTAssertEqual(demo.status, 0, demo.stderr)
    }
}
