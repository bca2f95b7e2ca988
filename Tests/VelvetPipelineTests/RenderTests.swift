import Foundation
import VelvetTestSupport
import XCTest

/// `velvet render` end to end on real faces: decode -> track -> skin -> encode.
final class RenderTests: XCTestCase {
    private var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    private func asset(_ name: String) throws -> String {
        let path = repository.appendingPathComponent("test-assets/\(name)").path
        guard FileManager.default.fileExists(atPath: path) else {
            XCTFail("\(path) is missing: run Tools/fetch-test-assets.sh and Tools/fetch-test-video.sh")
            throw CocoaError(.fileNoSuchFile)
        }
        return path
    }

    private func velvet(_ arguments: [String]) throws -> Tool.Result {
        let result = try Tool.run(Tool.velvet, arguments, environment: ["VELVET_VALIDATION": "1",
                                                                        "VELVET_MODELS_DIR": repository.appendingPathComponent("models").path])
        XCTAssertEqual(result.status, 0, "velvet \(arguments.joined(separator: " ")): \(result.stderr)")
        return result
    }

    /// Pixels as RGB bytes with their size.
    private func rgb(_ path: String) throws -> (bytes: [UInt8], width: Int, height: Int) {
        let size = try Tool.probe(path, "stream=width,height").split(separator: ",").compactMap { Int($0) }
        return ([UInt8](try Tool.pixels(path, "rgb24")), size[0], size[1])
    }

    /// A close-up cut by the frame's right edge, with a 1-pixel white line there: slimming pulls
    /// the cheek in without reading past the edge, so the line stays one pixel and no skin
    /// beside it turns white (the sampler repeated the line over 3 columns across the cheek).
    func testReshapeNearTheFrameEdgeReadsNothingPastIt() throws {
        let scratch = try Scratch()
        let input = scratch.path("close-up.png"), output = scratch.path("slim.png")
        try Tool.ffmpeg(["-i", try asset("grace_hopper.jpg"), "-vf", "crop=150:150:190:170,scale=640:640,pad=641:640:0:0:white", input])
        _ = try velvet(["render", input, "-o", output, "--preset", "none", "--slim", "0.15"])
        let before = try rgb(input), after = try rgb(output)
        XCTAssertNotEqual(after.bytes, before.bytes, "the face was slimmed")
        var whitened = 0
        for y in 0..<before.height {
            for x in before.width - 4..<before.width - 1 {
                let index = (y * before.width + x) * 3
                let white: [UInt8] = [255, 255, 255]
                if Array(after.bytes[index..<index + 3]) == white && Array(before.bytes[index..<index + 3]) != white { whitened += 1 }
            }
            let edge = (y * before.width + before.width - 1) * 3
            XCTAssertEqual(Array(after.bytes[edge..<edge + 3]), Array(before.bytes[edge..<edge + 3]), "the edge column at row \(y)")
        }
        XCTAssertEqual(whitened, 0, "skin beside the edge turned into the edge's line")
    }

    func testStillChangesTheFaceAndNothingFarFromIt() throws {
        let scratch = try Scratch()
        let input = scratch.path("grace.png")
        try Tool.ffmpeg(["-i", try asset("grace_hopper.jpg"), input])
        for method in ["freqsep", "bilateral"] {
            let output = scratch.path("out-\(method).png")
            _ = try velvet(["render", input, "-o", output, "--smoothing", method])
            let before = try rgb(input), after = try rgb(output)
            XCTAssertEqual(before.bytes.count, after.bytes.count)
            // The face (MediaPipe's oval on this photo spans about x 150-380, y 110-350) changed...
            var changedInFace = 0, changedFar = 0
            for y in 0..<before.height {
                for x in 0..<before.width {
                    let index = (y * before.width + x) * 3
                    let differs = before.bytes[index..<(index + 3)] != after.bytes[index..<(index + 3)]
                    if (170...360).contains(x) && (150...330).contains(y) { changedInFace += differs ? 1 : 0 }
                    // ...and the frame's outer band, far from any skin, is bit-exact (M3).
                    if x < 60 || x >= before.width - 60 || y >= before.height - 100 { changedFar += differs ? 1 : 0 }
                }
            }
            XCTAssertGreaterThan(changedInFace, 5000, "\(method) must smooth the face")
            XCTAssertEqual(changedFar, 0, "\(method) must leave the background bit-exact")
        }
    }

    /// A grey + alpha photo (full range, as every grey picture that states none) is retouched
    /// on the face alone: it was read and written as limited range, which squeezed the whole
    /// picture into 16...235.
    func testGreyAlphaStillChangesTheFaceAndNothingFarFromIt() throws {
        let scratch = try Scratch()
        let input = scratch.path("grace-ya8.png"), output = scratch.path("out-ya8.png")
        try Tool.ffmpeg(["-i", try asset("grace_hopper.jpg"), "-vf", "format=ya8", input])
        _ = try velvet(["render", input, "-o", output])
        XCTAssertEqual(try Tool.probe(output, "stream=pix_fmt"), "ya8")
        let size = try Tool.probe(input, "stream=width,height").split(separator: ",").compactMap { Int($0) }
        let before = [UInt8](try Tool.pixels(input, "ya8")), after = [UInt8](try Tool.pixels(output, "ya8"))
        XCTAssertEqual(before.count, after.count)
        var changedInFace = 0, changedFar = 0
        for y in 0..<size[1] {
            for x in 0..<size[0] {
                let index = (y * size[0] + x) * 2
                let differs = before[index..<(index + 2)] != after[index..<(index + 2)]
                if (170...360).contains(x) && (150...330).contains(y) { changedInFace += differs ? 1 : 0 }
                if x < 60 || x >= size[0] - 60 || y >= size[1] - 100 { changedFar += differs ? 1 : 0 }
            }
        }
        XCTAssertGreaterThan(changedInFace, 5000, "the face must be smoothed")
        XCTAssertEqual(changedFar, 0, "the background must stay bit-exact")
    }

    /// `analyze --overlay` of a grey photo is written in colour, so its colour-coded mesh and
    /// mask tint show (it was written grey, as the input); `--mask` stays grey.
    func testAnalyzeOverlayOfAGreyPhotoIsInColour() throws {
        let scratch = try Scratch()
        let input = scratch.path("grey.png"), overlay = scratch.path("overlay.png"), mask = scratch.path("mask.png")
        try Tool.ffmpeg(["-i", try asset("grace_hopper.jpg"), "-vf", "format=gray", input])
        _ = try velvet(["analyze", input, "--overlay", overlay, "--mask", mask, "--quiet"])
        XCTAssertEqual(try Tool.probe(overlay, "stream=pix_fmt"), "rgb24")
        XCTAssertEqual(try Tool.probe(mask, "stream=pix_fmt"), "gray")
        let pixels = [UInt8](try Tool.pixels(overlay, "rgb24"))
        var coloured = 0
        for index in stride(from: 0, to: pixels.count, by: 3) where pixels[index] != pixels[index + 1] || pixels[index + 1] != pixels[index + 2] {
            coloured += 1
        }
        XCTAssertGreaterThan(coloured, 1000, "the mesh is drawn in colour")
    }

    /// Non-square pixels reach the tracker as stored, so its faces are squeezed: a render says
    /// so in one warning (the effect landed off the face without a word); --no-effects does not.
    func testNonSquarePixelsAreWarnedOf() throws {
        let scratch = try Scratch()
        let input = scratch.path("anamorphic.mp4")
        try Tool.ffmpeg(["-loop", "1", "-i", try asset("grace_hopper.jpg"), "-vf", "scale=256:300,crop=256:240:0:20,scale=128:240,setsar=2/1",
                         "-frames:v", "2", "-r", "25", input])
        let rendered = try velvet(["render", input, "-o", scratch.path("out.mp4")])
        XCTAssertTrue(rendered.stderr.contains("velvet: warning: \(input) has non-square pixels (SAR 2:1)"), rendered.stderr)
        let plain = try velvet(["render", input, "-o", scratch.path("plain.mp4"), "--no-effects"])
        XCTAssertFalse(plain.stderr.contains("warning"), plain.stderr)
    }

    /// `--faces` naming a track no face has treats nothing: said in a warning (it passed for a
    /// render that did its work, silently the input), and not said when the track is there.
    func testFacesNamingNoTrackIsWarnedOf() throws {
        let scratch = try Scratch()
        let input = scratch.path("grace.png")
        try Tool.ffmpeg(["-i", try asset("grace_hopper.jpg"), "-vf", "scale=256:300", input])
        let none = try velvet(["render", input, "-o", scratch.path("none.png"), "--faces", "7"])
        XCTAssertTrue(none.stderr.contains("velvet: warning: --faces 7: no face had track 7 (the render's were 1), so no face was treated"),
                      none.stderr)
        XCTAssertEqual(try Tool.pixels(scratch.path("none.png"), "rgb24"), try Tool.pixels(input, "rgb24"), "nothing treated, as it says")
        let one = try velvet(["render", input, "-o", scratch.path("one.png"), "--faces", "1"])
        XCTAssertFalse(one.stderr.contains("warning"), one.stderr)
        // One ID there and one not (a typo): fewer faces treated than asked, said too (it was silent).
        let some = try velvet(["render", input, "-o", scratch.path("some.png"), "--faces", "1,99"])
        XCTAssertTrue(some.stderr.contains("velvet: warning: --faces 1,99: no face had track 99 (the render's were 1), so only 1 was treated"),
                      some.stderr)
        XCTAssertEqual(try Tool.pixels(scratch.path("some.png"), "rgb24"), try Tool.pixels(scratch.path("one.png"), "rgb24"))
    }

    func testZeroStrengthAndNoFaceAreBitExact() throws {
        let scratch = try Scratch()
        let input = scratch.path("grace.png"), background = scratch.path("flag.png")
        try Tool.ffmpeg(["-i", try asset("grace_hopper.jpg"), input])
        try Tool.ffmpeg(["-i", try asset("grace_hopper.jpg"), "-vf", "crop=120:200:0:0", background])
        _ = try velvet(["render", input, "-o", scratch.path("zero.png"), "--preset", "none"])
        XCTAssertEqual(try Tool.pixels(input, "rgb24"), try Tool.pixels(scratch.path("zero.png"), "rgb24"), "M9")
        _ = try velvet(["render", background, "-o", scratch.path("flag-out.png")])
        XCTAssertEqual(try Tool.pixels(background, "rgb24"), try Tool.pixels(scratch.path("flag-out.png"), "rgb24"), "M14")
    }

    func testRealVideoKeepsEveryFrameAndFindsTheFace() throws {
        let scratch = try Scratch()
        let input = try asset("kphotoalbum-movie.avi"), output = scratch.path("movie.mp4")
        let result = try velvet(["render", input, "-o", output, "--json", "--preset-x264", "ultrafast", "--quiet"])
        let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: result.output) as? [String: Any])
        XCTAssertEqual(summary["frames"] as? Int, 68)
        let runs = try XCTUnwrap(summary["faces"] as? [[String: Any]])
        XCTAssertTrue(runs.allSatisfy { ($0["faces"] as? Int ?? 0) >= 1 }, "a face in every frame: \(runs)")
        XCTAssertEqual(try Tool.probe(output, "stream=nb_frames"), "68")
        XCTAssertEqual(try Tool.probe(output, "stream=codec_name", stream: "a:0"), "aac", "pcm_u8 audio re-encoded for mp4")
        let stages = try XCTUnwrap(summary["gpu_ms"] as? [String: Double])
        for stage in ["lookahead.color_in", "face.mesh", "face.mesh+segment", "skin.mask", "skin.smoothing", "skin.blend", "color_out"] {
            XCTAssertNotNil(stages[stage], "per-stage GPU time for \(stage)")
        }
        // A CPU device renders from the look-ahead's converted image; a GPU converts again.
        let onCPU = try XCTUnwrap(summary["device_kind"] as? String) == "cpu"
        XCTAssertEqual(stages["color_in"] == nil, onCPU, "color_in on a \(summary["device_kind"] ?? "") device: \(stages.keys.sorted())")
    }

    func testColourGradeAndDebugViews() throws {
        let scratch = try Scratch()
        let input = scratch.path("astronaut.png")
        try Tool.ffmpeg(["-i", try asset("astronaut.png"), input])
        _ = try velvet(["render", input, "-o", scratch.path("warm.png"), "--lut", "warm", "--lut-on", "frame"])
        XCTAssertNotEqual(try Tool.pixels(input, "rgb24"), try Tool.pixels(scratch.path("warm.png"), "rgb24"))
        // The global sharpen reaches the background too (it is not limited to the skin region).
        _ = try velvet(["render", input, "-o", scratch.path("sharp.png"), "--preset", "none", "--sharpen", "0.8"])
        let before = try Tool.pixels(input, "rgb24"), after = try Tool.pixels(scratch.path("sharp.png"), "rgb24")
        XCTAssertNotEqual(before.prefix(512 * 3 * 40), after.prefix(512 * 3 * 40), "the top rows (background) are sharpened")
        for view in ["mask", "landmarks", "zones", "spots"] {
            _ = try velvet(["render", input, "-o", scratch.path("\(view).png"), "--debug-view", view])
            XCTAssertEqual(try Tool.probe(scratch.path("\(view).png"), "stream=width,height"), "512,512")
        }
        XCTAssertNotEqual(try Tool.pixels(scratch.path("zones.png"), "rgb24"), before, "the zone map is drawn")
        // Whatever the strength: at 0 with no spot removal the skin stage did not run and the view was the input.
        _ = try velvet(["render", input, "-o", scratch.path("zones0.png"), "--debug-view", "zones", "--strength", "0", "--spots", "0"])
        XCTAssertEqual(try Tool.pixels(scratch.path("zones0.png"), "rgb24"), try Tool.pixels(scratch.path("zones.png"), "rgb24"))
        // Spot fills in magenta: Grace Hopper's face has blemish-like marks the stage fills.
        let grace = scratch.path("grace.png")
        try Tool.ffmpeg(["-i", try asset("grace_hopper.jpg"), grace])
        _ = try velvet(["render", grace, "-o", scratch.path("grace-spots.png"), "--debug-view", "spots"])
        let plain = try rgb(grace), marked = try rgb(scratch.path("grace-spots.png"))
        var magenta = 0, changedOutsideFace = 0
        for index in stride(from: 0, to: plain.bytes.count, by: 3) where plain.bytes[index..<(index + 3)] != marked.bytes[index..<(index + 3)] {
            let (x, y) = ((index / 3) % plain.width, (index / 3) / plain.width)
            if !((150...380).contains(x) && (110...350).contains(y)) { changedOutsideFace += 1 }
            let (r, g, b) = (Int(marked.bytes[index]), Int(marked.bytes[index + 1]), Int(marked.bytes[index + 2]))
            if r > g + 60 && b > g + 60 { magenta += 1 }
        }
        XCTAssertGreaterThan(magenta, 20, "spot fills are marked")
        XCTAssertEqual(changedOutsideFace, 0, "nothing marked outside the face")
        // A grey photo's colour-coded views are written in colour (the mask's grey stays grey).
        let grey = scratch.path("grey.png")
        try Tool.ffmpeg(["-i", grace, "-pix_fmt", "gray", grey])
        for (view, format) in [("spots", "rgb24"), ("landmarks", "rgb24"), ("mask", "gray")] {
            let output = scratch.path("grey-\(view).png")
            _ = try velvet(["render", grey, "-o", output, "--debug-view", view])
            XCTAssertEqual(try Tool.probe(output, "stream=pix_fmt"), format, view)
        }
        let landmarks = try rgb(scratch.path("grey-landmarks.png")).bytes
        let coloured = stride(from: 0, to: landmarks.count, by: 3).filter { (index: Int) -> Bool in
            let (r, g, b) = (landmarks[index], landmarks[index + 1], landmarks[index + 2])
            return r != g || g != b
        }
        XCTAssertGreaterThan(coloured.count, 1000, "the mesh is drawn in colour over the grey photo")
        let bad = try Tool.run(Tool.velvet, ["render", input, "-o", scratch.path("x.png"), "--lut", scratch.path("missing.cube")])
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.stderr.contains("missing.cube: no such file"), bad.stderr)
    }
}

/// `velvet demo`, shortened: it must produce every file it announces.
/// Every built-in preset with each smoothing method, on a video and on a still: each render
/// succeeds under validation, keeps every frame, tracks the face in each, and (but `none`)
/// changes the face while `none` changes nothing.
final class PresetMatrixTests: XCTestCase {
    private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func testEveryPresetWithBothMethodsOnAVideoAndAStill() throws {
        let scratch = try Scratch()
        let photo = repository.appendingPathComponent("test-assets/grace_hopper.jpg").path
        let clip = scratch.path("clip.mp4"), still = scratch.path("still.png")
        try Tool.ffmpeg(["-loop", "1", "-framerate", "24", "-t", "0.25", "-i", photo,
                         "-vf", "scale=256:300,setsar=1,format=yuv420p", "-c:v", "libx264", "-crf", "12", clip])
        try Tool.ffmpeg(["-i", photo, "-vf", "scale=256:300", still])
        let environment = ["VELVET_VALIDATION": "1", "VELVET_MODELS_DIR": repository.appendingPathComponent("models").path,
                           "XDG_CONFIG_HOME": scratch.path("config")]
        let stillPixels = try Tool.pixels(still, "rgb24")
        let doc = try String(contentsOf: repository.appendingPathComponent("docs/CLI.md"), encoding: .utf8)
        let gpuSectionsDoc = try XCTUnwrap(doc.split(separator: "\n").first { $0.hasPrefix("| `gpu_ms` |") })
        for preset in ["none", "natural", "soft", "studio", "glam"] {
            for method in ["bilateral", "freqsep"] {
                let name = "\(preset)-\(method)"
                let video = try Tool.run(Tool.velvet, ["render", clip, "-o", scratch.path("\(name).mp4"), "--preset", preset,
                                                       "--smoothing", method, "--json", "--quiet"], environment: environment)
                XCTAssertEqual(video.status, 0, "\(name): \(video.stderr)")
                let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: video.output) as? [String: Any], name)
                XCTAssertEqual(summary["frames"] as? Int, 6, name)
                let runs = try XCTUnwrap(summary["faces"] as? [[String: Any]], name)
                XCTAssertEqual(runs.count, 1, "\(name): one face in every frame: \(runs)")
                XCTAssertEqual(runs.first?["faces"] as? Int, 1, "\(name): \(runs)")
                XCTAssertEqual(try Tool.probe(scratch.path("\(name).mp4"), "stream=nb_frames"), "6", name)
                // The retouch stages run where the preset sets them.
                let sections = Set((summary["gpu_ms"] as? [String: Any] ?? [:]).keys)
                let retouch: Set<String> = ["teeth", "eyes", "under-eye", "shine"]
                XCTAssertEqual(sections.intersection(retouch), ["studio", "glam"].contains(preset) ? retouch : [], "\(name): \(sections.sorted())")
                // Every section a render reports is one docs/CLI.md names (models run side by side
                // are one section, their names joined by +).
                for section in sections {
                    for part in section.split(separator: "+").enumerated().map({ $0.offset == 0 ? String($0.element) : "face.\($0.element)" }) {
                        XCTAssertTrue(gpuSectionsDoc.contains("`\(part)`"), "\(name): docs/CLI.md's gpu_ms row lacks \(part) (\(section))")
                    }
                }

                let image = try Tool.run(Tool.velvet, ["render", still, "-o", scratch.path("\(name).png"), "--preset", preset,
                                                       "--smoothing", method, "--quiet"], environment: environment)
                XCTAssertEqual(image.status, 0, "\(name): \(image.stderr)")
                let rendered = try Tool.pixels(scratch.path("\(name).png"), "rgb24")
                if preset == "none" {
                    XCTAssertEqual(rendered, stillPixels, "\(name) is the identity")
                } else {
                    XCTAssertNotEqual(rendered, stillPixels, "\(name) changes the face")
                }
            }
        }
    }
}

final class DemoTests: XCTestCase {
    func testDemoWritesItsOutputs() throws {
        let scratch = try Scratch()
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let result = try Tool.run(Tool.velvet, ["demo", "--output-dir", scratch.url.path, "--frames", "6", "--size", "320x180",
                                                "--assets", repository.appendingPathComponent("test-assets").path, "--quiet"],
                                  environment: ["VELVET_VALIDATION": "1", "VELVET_MODELS_DIR": repository.appendingPathComponent("models").path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(scratch.files, ["after-bilateral.mp4", "after.mp4", "after.png", "before-after.png", "before.mp4"])
        XCTAssertEqual(try Tool.probe(scratch.path("after.mp4"), "stream=nb_frames"), "6")
        XCTAssertTrue(result.stdout.contains("a face in 6"), result.stdout)
        // A second run refuses before any work unless -y (Tools/demo.sh passes it).
        let again = try Tool.run(Tool.velvet, ["demo", "--output-dir", scratch.url.path, "--frames", "6", "--size", "320x180",
                                               "--assets", repository.appendingPathComponent("test-assets").path, "--quiet"])
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.stderr.contains("before.mp4 exists (use -y to overwrite)"), again.stderr)
    }

    /// A size the renders cannot take is refused before the clip is written: past the memory
    /// limit (it wrote before.mp4, then refused the render), past FFmpeg's picture limit (x264
    /// said "Invalid argument").
    func testSizesTheRendersCannotTakeAreRefusedBeforeAnythingIsWritten() throws {
        let scratch = try Scratch()
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let assets = repository.appendingPathComponent("test-assets").path
        let output = scratch.path("demo")
        let memory = try Tool.run(Tool.velvet, ["demo", "--output-dir", output, "--frames", "2", "--size", "1280x720", "--assets", assets, "--quiet"],
                                  environment: ["VELVET_MEMORY_LIMIT": "256M"])
        XCTAssertEqual(memory.status, 1, memory.stderr)
        XCTAssertTrue(memory.stderr.contains("frame size 1280x720 needs about"), memory.stderr)
        XCTAssertTrue(memory.stderr.contains("above the limit of 256 MiB"), memory.stderr)
        XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: output)) ?? [], [], "nothing written")
        let huge = try Tool.run(Tool.velvet, ["demo", "--output-dir", output, "--size", "16384x16384", "--assets", assets, "--quiet"])
        XCTAssertEqual(huge.status, 2, huge.stderr)
        XCTAssertTrue(huge.stderr.contains("--size 16384x16384 is past FFmpeg's limit of about 268 million pixels"), huge.stderr)
        XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: output)) ?? [], [])
    }
}

/// `velvet presets` and `--preset`: save, list, show, default, render, delete.
final class PresetCommandTests: XCTestCase {
    func testPresetRoundTripAndRendering() throws {
        let scratch = try Scratch()
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let environment = ["XDG_CONFIG_HOME": scratch.path("config"), "VELVET_MODELS_DIR": repository.appendingPathComponent("models").path]
        func velvet(_ arguments: [String]) throws -> Tool.Result { try Tool.run(Tool.velvet, arguments, environment: environment) }

        XCTAssertEqual(try velvet(["presets", "save", "mine", "--preset", "soft", "--lipstick", "0.6"]).status, 0)
        let again = try velvet(["presets", "save", "mine", "--preset", "soft", "--lipstick", "0.8"])
        XCTAssertEqual(again.status, 1, "a saved preset is replaced only with -y")
        XCTAssertTrue(again.stderr.contains("mine.json exists (use -y to overwrite)"), again.stderr)
        XCTAssertEqual(try velvet(["presets", "save", "mine", "--preset", "soft", "--lipstick", "0.8", "-y"]).status, 0)
        XCTAssertTrue(try velvet(["presets", "list"]).stdout.contains("mine"))
        XCTAssertTrue(try velvet(["presets", "show", "mine"]).stdout.contains("\"strength\" : 0.8"))
        XCTAssertEqual(try velvet(["presets", "default", "mine"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines), "mine")
        let photo = repository.appendingPathComponent("test-assets/astronaut.png").path
        for preset in ["none", "natural", "soft", "studio", "glam", "mine"] {
            let rendered = try velvet(["render", photo, "-o", scratch.path("\(preset).png"), "--preset", preset, "--quiet"])
            XCTAssertEqual(rendered.status, 0, "\(preset): \(rendered.stderr)")
        }
        // No --preset: the default ("mine") applies; a flag still overrides it.
        XCTAssertEqual(try velvet(["render", photo, "-o", scratch.path("default.png"), "--quiet"]).status, 0)
        XCTAssertEqual(try Tool.pixels(scratch.path("default.png"), "rgb24"), try Tool.pixels(scratch.path("mine.png"), "rgb24"))
        XCTAssertEqual(try Tool.pixels(scratch.path("none.png"), "rgb24"), try Tool.pixels(photo, "rgb24"), "none is the identity")
        XCTAssertEqual(try velvet(["presets", "delete", "mine"]).status, 0)
        XCTAssertFalse(try velvet(["presets", "list"]).stdout.contains("mine"))
        // A folder where a preset file is named: one line naming it, and no preset of that name listed.
        try FileManager.default.createDirectory(atPath: scratch.path("config/velvet/presets/folder.json"), withIntermediateDirectories: true)
        XCTAssertFalse(try velvet(["presets", "list"]).stdout.contains("folder"))
        let folder = try velvet(["render", photo, "-o", scratch.path("f.png"), "--preset", scratch.path("config/velvet/presets/folder.json")])
        XCTAssertEqual(folder.status, 1)
        XCTAssertTrue(folder.stderr.contains("cannot read the file: it is a folder"), folder.stderr)
        // --preset reads a name ending in .json as a file, so no preset may be saved under one.
        let fileLike = try velvet(["presets", "save", "mine.json", "--preset", "soft"])
        XCTAssertNotEqual(fileLike.status, 0)
        XCTAssertTrue(fileLike.stderr.contains("not a valid preset name"), fileLike.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.path("config/velvet/presets/mine.json.json")))

        try FileManager.default.createDirectory(atPath: scratch.path("config/velvet/presets"), withIntermediateDirectories: true)
        try "{\"skin\": {\"strenght\": 0.5}}".write(toFile: scratch.path("config/velvet/presets/typo.json"), atomically: true, encoding: .utf8)
        let bad = try velvet(["render", photo, "-o", scratch.path("x.png"), "--preset", "typo"])
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.stderr.contains("typo.json") && bad.stderr.contains("strenght"), bad.stderr)
    }

    /// A relative LUT file in a preset file is read from the preset file's folder, wherever the
    /// render runs (it was read from the working folder); a hand-placed preset a built-in hides
    /// is named by `presets list`.
    func testPresetFilesReadTheirLUTFromTheirFolder() throws {
        let scratch = try Scratch()
        let environment = ["XDG_CONFIG_HOME": scratch.path("config")]
        try FileManager.default.createDirectory(atPath: scratch.path("looks/luts"), withIntermediateDirectories: true)
        let cube = "LUT_3D_SIZE 2\n" + (0..<8).map { i in "\(1 - Double(i & 1)) \(1 - Double((i >> 1) & 1)) \(1 - Double(i >> 2))" }.joined(separator: "\n") + "\n"
        try cube.write(toFile: scratch.path("looks/luts/invert.cube"), atomically: true, encoding: .utf8)
        try #"{"lut": {"file": "luts/invert.cube", "strength": 1, "scope": "frame"}}"#.write(toFile: scratch.path("looks/invert.json"),
                                                                                           atomically: true, encoding: .utf8)
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=white:size=32x32", "-frames:v", "1", scratch.path("white.png")])
        let rendered = try Tool.run(Tool.velvet, ["render", scratch.path("white.png"), "-o", scratch.path("black.png"),
                                                  "--preset", scratch.path("looks/invert.json")], environment: environment)
        XCTAssertEqual(rendered.status, 0, rendered.stderr)
        XCTAssertLessThanOrEqual(try Tool.pixels(scratch.path("black.png"), "gray").max() ?? 255, 2, "the LUT from looks/luts was applied")

        try FileManager.default.createDirectory(atPath: scratch.path("config/velvet/presets"), withIntermediateDirectories: true)
        try "{}".write(toFile: scratch.path("config/velvet/presets/natural.json"), atomically: true, encoding: .utf8)
        let listed = try Tool.run(Tool.velvet, ["presets", "list"], environment: environment)
        XCTAssertEqual(listed.status, 0, listed.stderr)
        XCTAssertTrue(listed.stderr.contains("presets/natural.json is not used"), listed.stderr)
    }

    /// What would break every later render is refused when a preset is saved or made the
    /// default; a broken default-preset file is reported, not a reason to list nothing.
    func testPresetCommandsRefuseWhatCannotWork() throws {
        let scratch = try Scratch()
        let environment = ["XDG_CONFIG_HOME": scratch.path("config")]
        func velvet(_ arguments: [String]) throws -> Tool.Result { try Tool.run(Tool.velvet, arguments, environment: environment) }
        XCTAssertEqual(try velvet(["presets", "default", "soft", "--clear"]).status, 2, "a NAME or --clear, not both")
        XCTAssertEqual(try velvet(["presets", "save", "a b"]).status, 2, "a bad name is a bad value")
        // ... for every subcommand and option that takes a name (delete and default said exit 1;
        // show, render --preset and compare --a-preset did until later).
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=gray:size=32x32", "-frames:v", "1", scratch.path("in.png")])
        for arguments in [["presets", "delete", "../../victim"], ["presets", "delete", ".."], ["presets", "default", "../x"],
                          ["presets", "show", "a b"], ["render", scratch.path("in.png"), "-o", scratch.path("out.png"), "--preset", "a b"],
                          ["compare", scratch.path("in.png"), "-o", scratch.path("ab.png"), "--a-preset", "a b", "--b-preset", "soft"]] {
            XCTAssertEqual(try velvet(arguments).status, 2, "\(arguments)")
        }
        try FileManager.default.createDirectory(atPath: scratch.path("folder.cube"), withIntermediateDirectories: true)
        // Lookup images that no render can use: another size, and not a picture at all.
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=red:size=256x256", "-frames:v", "1", scratch.path("small.png")])
        try "not a picture".write(toFile: scratch.path("fake.png"), atomically: true, encoding: .utf8)
        for lut in [scratch.path("nosuch.cube"), scratch.path("folder.cube"), scratch.path("grade.lut"), scratch.path("small.png"),
                    scratch.path("fake.png")] {
            let saved = try velvet(["presets", "save", "graded", "--lut", lut])
            XCTAssertEqual(saved.status, 1, "\(lut): \(saved.stderr)")
            XCTAssertEqual(saved.stderr.split(separator: "\n").count, 1, saved.stderr)
            XCTAssertTrue(saved.stderr.contains(lut), saved.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.path("config/velvet/presets/graded.json")), "nothing saved")
        XCTAssertTrue(try velvet(["presets", "save", "graded", "--lut", scratch.path("folder.cube")]).stderr.contains("is a folder"))
        XCTAssertTrue(try velvet(["presets", "save", "graded", "--lut", scratch.path("small.png")]).stderr.contains("must be 512x512, got 256x256"))
        // A relative LUT path is saved in full: a later render from another folder finds it.
        XCTAssertEqual(try velvet(["luts", "export", scratch.path("luts")]).status, 0)
        let relative = try Tool.run("/bin/bash", ["-c", "cd '\(scratch.path("luts"))' && '\(Tool.velvet)' presets save graded --lut warm.cube"],
                                    environment: environment)
        XCTAssertEqual(relative.status, 0, relative.stderr)
        XCTAssertTrue(try velvet(["presets", "show", "graded"]).stdout.contains(scratch.path("luts/warm.cube")))
        // A default preset deleted by hand: the error says it is the default and how to change it.
        XCTAssertEqual(try velvet(["presets", "default", "graded"]).status, 0)
        try FileManager.default.removeItem(atPath: scratch.path("config/velvet/presets/graded.json"))
        let gone = try velvet(["render", scratch.path("nosuch.png"), "-o", scratch.path("x.png")])
        XCTAssertEqual(gone.status, 1, gone.stderr)
        XCTAssertTrue(gone.stderr.contains("it is the default preset: velvet presets default NAME|--clear changes it"), gone.stderr)
        let listedGone = try velvet(["presets", "list"])
        XCTAssertEqual(listedGone.status, 0)
        XCTAssertTrue(listedGone.stderr.hasPrefix("velvet: warning: preset graded: no such preset"), "list warns: \(listedGone.stderr)")
        // ... and one whose LUT file has gone since.
        XCTAssertEqual(try velvet(["presets", "default", "--clear"]).status, 0)
        let relativeAgain = try Tool.run("/bin/bash", ["-c", "cd '\(scratch.path("luts"))' && '\(Tool.velvet)' presets save graded --lut warm.cube"],
                                         environment: environment)
        XCTAssertEqual(relativeAgain.status, 0, relativeAgain.stderr)
        XCTAssertEqual(try velvet(["presets", "default", "graded"]).status, 0)
        try FileManager.default.removeItem(atPath: scratch.path("luts/warm.cube"))
        let lutGone = try velvet(["render", scratch.path("nosuch.png"), "-o", scratch.path("x.png")])
        XCTAssertEqual(lutGone.status, 1, lutGone.stderr)
        XCTAssertTrue(lutGone.stderr.contains("preset graded: its LUT file \(scratch.path("luts/warm.cube")) is missing (it is the default preset"),
                      lutGone.stderr)
        XCTAssertEqual(try velvet(["presets", "default", "--clear"]).status, 0)

        XCTAssertEqual(try velvet(["presets", "save", "mine", "--preset", "soft"]).status, 0)
        try "../x".write(toFile: scratch.path("config/velvet/default-preset"), atomically: true, encoding: .utf8)
        let listed = try velvet(["presets", "list"])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        XCTAssertTrue(listed.stdout.contains("mine") && listed.stderr.hasPrefix("velvet: warning: "), listed.stdout + listed.stderr)
        XCTAssertEqual(try velvet(["presets", "delete", "mine"]).status, 0, "an unrelated preset still deletes")
        XCTAssertEqual(try velvet(["presets", "default", "--clear"]).status, 0, "and the default clears")
        XCTAssertEqual(try velvet(["presets", "list"]).stderr, "")
    }
}

/// Colour LUT files through the CLI: the shipped grades export as .cube files that load
/// back, and an identity table changes nothing.
final class LUTCommandTests: XCTestCase {
    /// A LUT asked for on the skin of a preset with no skin stage grades nothing: said in one
    /// warning line (it was silent), and not said where it grades.
    func testASkinLUTWithNoSkinStageIsWarnedOf() throws {
        let scratch = try Scratch()
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=orange:size=32x32", "-frames:v", "1", scratch.path("in.png")])
        let idle = try Tool.run(Tool.velvet, ["render", scratch.path("in.png"), "-o", scratch.path("a.png"), "--preset", "none", "--lut", "warm"])
        XCTAssertEqual(idle.status, 0, idle.stderr)
        XCTAssertEqual(idle.stderr.split(separator: "\n").filter { !$0.hasPrefix("velvet: validation") }.count, 1, idle.stderr)
        XCTAssertTrue(idle.stderr.hasPrefix("velvet: warning: the LUT is applied through the skin's blend weight"), idle.stderr)
        XCTAssertEqual(try Tool.pixels(scratch.path("a.png"), "rgb24"), try Tool.pixels(scratch.path("in.png"), "rgb24"), "nothing graded, as it says")
        for extra in [["--lut-on", "frame"], ["--strength", "0.5"], ["--spots", "0.5"]] {
            let graded = try Tool.run(Tool.velvet, ["render", scratch.path("in.png"), "-o", scratch.path("b.png"), "-y", "--preset", "none",
                                                    "--lut", "warm"] + extra)
            XCTAssertEqual(graded.status, 0, graded.stderr)
            XCTAssertFalse(graded.stderr.contains("warning"), "\(extra): \(graded.stderr)")
        }
    }

    func testExportedGradesLoadAndIdentityIsIdentity() throws {
        let scratch = try Scratch()
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let environment = ["VELVET_MODELS_DIR": repository.appendingPathComponent("models").path, "VELVET_VALIDATION": "1"]
        let exported = try Tool.run(Tool.velvet, ["luts", "export", scratch.path("luts")])
        XCTAssertEqual(exported.status, 0, exported.stderr)
        XCTAssertEqual(exported.stdout.split(separator: "\n").count, 4)
        XCTAssertEqual(try Tool.run(Tool.velvet, ["luts", "export", scratch.path("luts")]).status, 1, "exported files are replaced only with -y")
        XCTAssertEqual(try Tool.run(Tool.velvet, ["luts", "export", scratch.path("luts"), "-y"]).status, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path("luts")).count, 4, "no partial files")
        let photo = repository.appendingPathComponent("test-assets/astronaut.png").path
        let warm = try Tool.run(Tool.velvet, ["render", photo, "-o", scratch.path("warm.png"), "--preset", "none",
                                             "--lut", scratch.path("luts/warm.cube"), "--lut-on", "frame"], environment: environment)
        XCTAssertEqual(warm.status, 0, warm.stderr)
        XCTAssertNotEqual(try Tool.pixels(scratch.path("warm.png"), "rgb24"), try Tool.pixels(photo, "rgb24"))

        var identity = "LUT_3D_SIZE 17\n"
        for b in 0..<17 { for g in 0..<17 { for r in 0..<17 { identity += "\(Double(r) / 16) \(Double(g) / 16) \(Double(b) / 16)\n" } } }
        try identity.write(toFile: scratch.path("identity.cube"), atomically: true, encoding: .utf8)
        let same = try Tool.run(Tool.velvet, ["render", photo, "-o", scratch.path("same.png"), "--preset", "none",
                                             "--lut", scratch.path("identity.cube"), "--lut-on", "frame"], environment: environment)
        XCTAssertEqual(same.status, 0, same.stderr)
        XCTAssertEqual(try Tool.pixels(scratch.path("same.png"), "rgb24"), try Tool.pixels(photo, "rgb24"), "identity .cube is the identity")

        try "LUT_3D_SIZE 2\n0 0 0\n".write(toFile: scratch.path("short.cube"), atomically: true, encoding: .utf8)
        let bad = try Tool.run(Tool.velvet, ["render", photo, "-o", scratch.path("bad.png"), "--lut", scratch.path("short.cube")],
                               environment: environment)
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.stderr.contains("short.cube") && bad.stderr.contains("expected 8"), bad.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.path("bad.png")))

        // A folder named like a LUT cannot be read (not "not UTF-8 text"); a FIFO reads as the file does.
        try FileManager.default.createDirectory(atPath: scratch.path("folder.cube"), withIntermediateDirectories: true)
        let folder = try Tool.run(Tool.velvet, ["render", photo, "-o", scratch.path("f.png"), "--lut", scratch.path("folder.cube")],
                                  environment: environment)
        XCTAssertEqual(folder.status, 1)
        XCTAssertTrue(folder.stderr.contains("folder.cube") && folder.stderr.contains("is a folder, not a LUT file"), folder.stderr)
        let fifo = scratch.path("fifo.cube")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let identityData = Data(identity.utf8)
        let feeder = Thread { try? identityData.write(to: URL(fileURLWithPath: fifo)) }
        feeder.start()
        let piped = try Tool.run(Tool.velvet, ["render", photo, "-o", scratch.path("piped.png"), "--preset", "none", "--lut", fifo, "--lut-on", "frame"],
                                 environment: environment)
        XCTAssertEqual(piped.status, 0, piped.stderr)
        XCTAssertEqual(try Tool.pixels(scratch.path("piped.png"), "rgb24"), try Tool.pixels(photo, "rgb24"), "the identity through a FIFO")
        XCTAssertEqual(try Tool.run(Tool.velvet, ["luts", "export", ""]).status, 2, "an empty DIR is a usage error")
    }
}
