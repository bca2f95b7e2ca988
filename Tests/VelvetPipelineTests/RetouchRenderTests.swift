import Foundation
import VelvetTestSupport
import XCTest

/// The retouch stages through `velvet render`: their flags and their debug views.
final class RetouchRenderTests: XCTestCase {
    private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    private func velvet(_ arguments: [String]) throws {
        let result = try Tool.run(Tool.velvet, arguments, environment: ["VELVET_VALIDATION": "1",
                                                                        "VELVET_MODELS_DIR": repository.appendingPathComponent("models").path])
        XCTAssertEqual(result.status, 0, "velvet \(arguments.joined(separator: " ")): \(result.stderr)")
    }

    /// `--debug-view teeth` marks the open mouth's teeth in cyan and `eyes` the irises in
    /// yellow and the whites in magenta; both change nothing far from those features (the
    /// default preset's own effects are not drawn in a view).
    func testDebugViewsShowTheNewMasks() throws {
        let scratch = try Scratch()
        let photo = repository.appendingPathComponent("test-assets/photos/obama-podium.jpg").path
        guard FileManager.default.fileExists(atPath: photo) else { return XCTFail("\(photo) is missing: run Tools/setup.sh --assets") }
        let input = scratch.path("in.png")
        try Tool.ffmpeg(["-i", photo, "-pix_fmt", "rgb24", input])
        let before = [UInt8](try Tool.pixels(input, "rgb24"))
        for (view, colours) in [("teeth", ["cyan"]), ("eyes", ["yellow", "magenta"])] {
            let output = scratch.path("\(view).png")
            try velvet(["render", input, "-o", output, "--debug-view", view])
            let after = [UInt8](try Tool.pixels(output, "rgb24"))
            XCTAssertEqual(after.count, before.count)
            var found: [String: Int] = [:], changed = 0
            for index in stride(from: 0, to: after.count, by: 3) where after[index..<(index + 3)] != before[index..<(index + 3)] {
                changed += 1
                let (r, g, b) = (Int(after[index]), Int(after[index + 1]), Int(after[index + 2]))
                if g > r + 80 && b > r + 80 { found["cyan", default: 0] += 1 }
                if r > b + 80 && g > b + 80 { found["yellow", default: 0] += 1 }
                if r > g + 80 && b > g + 80 { found["magenta", default: 0] += 1 }
            }
            print("[view] \(view): \(changed) px changed, \(found)")
            for colour in colours { XCTAssertGreaterThan(found[colour] ?? 0, 20, "\(view): \(colour) drawn") }
            XCTAssertLessThan(changed, before.count / 3 / 50, "\(view): only the feature's region is drawn")
        }
    }

    /// `--under-eye 1` over the default preset changes only a small part of the frame (the
    /// troughs) and lifts it; `--debug-view under-eye` draws the troughs' weight in green and
    /// the cheek reference in blue, and nothing far from them.
    func testUnderEyeFlagAndDebugView() throws {
        let scratch = try Scratch()
        let photo = repository.appendingPathComponent("test-assets/photos/obama.jpg").path
        guard FileManager.default.fileExists(atPath: photo) else { return XCTFail("\(photo) is missing: run Tools/setup.sh --assets") }
        let input = scratch.path("in.png")
        try Tool.ffmpeg(["-i", photo, "-pix_fmt", "rgb24", input])
        let before = [UInt8](try Tool.pixels(input, "rgb24"))
        func render(_ name: String, _ options: [String]) throws -> [UInt8] {
            try velvet(["render", input, "-o", scratch.path(name)] + options)
            let pixels = [UInt8](try Tool.pixels(scratch.path(name), "rgb24"))
            XCTAssertEqual(pixels.count, before.count, name)
            return pixels
        }
        let base = try render("base.png", []), lifted = try render("under-eye.png", ["--under-eye", "1"])
        var changed = 0, rise = 0
        for index in stride(from: 0, to: base.count, by: 3) where base[index..<(index + 3)] != lifted[index..<(index + 3)] {
            changed += 1
            rise += (0..<3).map { Int(lifted[index + $0]) - Int(base[index + $0]) }.reduce(0, +)
        }
        print("[under-eye] render: \(changed) px changed, mean rise \(Double(rise) / Double(max(changed, 1)) / 3)")
        XCTAssertGreaterThan(changed, 100, "--under-eye 1 changes the troughs")
        XCTAssertLessThan(changed, before.count / 3 / 50, "--under-eye 1 changes only the troughs")
        XCTAssertGreaterThan(rise, 0, "--under-eye 1 lifts")

        let view = try render("view.png", ["--debug-view", "under-eye"])
        var green = 0, blue = 0, drawn = 0
        for index in stride(from: 0, to: view.count, by: 3) where view[index..<(index + 3)] != before[index..<(index + 3)] {
            drawn += 1
            let (r, g, b) = (Int(view[index]), Int(view[index + 1]), Int(view[index + 2]))
            if g > r + 80 && g > b + 80 { green += 1 }
            if b > r + 60 && b > g + 60 { blue += 1 }
        }
        print("[view] under-eye: \(drawn) px changed, green \(green), blue \(blue)")
        XCTAssertGreaterThan(green, 20, "under-eye: green drawn")
        XCTAssertGreaterThan(blue, 20, "under-eye: blue drawn")
        XCTAssertLessThan(drawn, before.count / 3 / 50, "under-eye: only the troughs and cheek bands are drawn")
    }

    /// `--shine 1` over the default preset darkens what it changes (the highlights), on a small
    /// part of the frame; `--debug-view shine` draws the regions in blue and the highlights it
    /// finds (obama-podium's nose tip and cheek) in red, and nothing far from the face.
    func testShineFlagAndDebugView() throws {
        let scratch = try Scratch()
        let photo = repository.appendingPathComponent("test-assets/photos/obama-podium.jpg").path
        guard FileManager.default.fileExists(atPath: photo) else { return XCTFail("\(photo) is missing: run Tools/setup.sh --assets") }
        let input = scratch.path("in.png")
        try Tool.ffmpeg(["-i", photo, "-pix_fmt", "rgb24", input])
        let before = [UInt8](try Tool.pixels(input, "rgb24"))
        func luma(_ bytes: [UInt8], _ index: Int) -> Double {
            0.2126 * Double(bytes[index]) + 0.7152 * Double(bytes[index + 1]) + 0.0722 * Double(bytes[index + 2])
        }

        try velvet(["render", input, "-o", scratch.path("plain.png")])
        try velvet(["render", input, "-o", scratch.path("shine.png"), "--shine", "1"])
        let plain = [UInt8](try Tool.pixels(scratch.path("plain.png"), "rgb24"))
        let shine = [UInt8](try Tool.pixels(scratch.path("shine.png"), "rgb24"))
        XCTAssertEqual(shine.count, plain.count)
        var changed = 0, fall = 0.0
        for index in stride(from: 0, to: shine.count, by: 3) where shine[index..<(index + 3)] != plain[index..<(index + 3)] {
            changed += 1
            fall += luma(plain, index) - luma(shine, index)
        }
        print("[shine] --shine 1: \(changed) px changed, mean luma fall \(changed > 0 ? fall / Double(changed) : 0)")
        XCTAssertGreaterThan(changed, 100, "--shine 1 changes the highlights")
        XCTAssertGreaterThan(fall, 0, "--shine 1 darkens what it changes")
        XCTAssertLessThan(changed, before.count / 3 / 20, "--shine 1 acts on forehead, nose and cheeks only")

        try velvet(["render", input, "-o", scratch.path("view.png"), "--debug-view", "shine"])
        let view = [UInt8](try Tool.pixels(scratch.path("view.png"), "rgb24"))
        XCTAssertEqual(view.count, before.count)
        var blue = 0, red = 0, drawn = 0
        for index in stride(from: 0, to: view.count, by: 3) where view[index..<(index + 3)] != before[index..<(index + 3)] {
            drawn += 1
            let (r, g, b) = (Int(view[index]), Int(view[index + 1]), Int(view[index + 2]))
            if b > r + 80 && b > g + 80 { blue += 1 }
            if r > g + 120 && r > b + 40 { red += 1 }
        }
        print("[view] shine: \(drawn) px changed, blue \(blue), red \(red)")
        XCTAssertGreaterThan(blue, 1000, "shine: regions drawn in blue")
        XCTAssertGreaterThan(red, 20, "shine: highlights drawn in red")
        XCTAssertLessThan(drawn, before.count / 3 / 20, "shine: only the regions are drawn")
    }
}
