import Foundation
import VelvetBeauty
import VelvetGPU
import VelvetTestSupport
import VelvetFiles
import XCTest

/// Presets: JSON round trip, the store on disk, clear errors, built-ins valid and rendering.
final class PresetTests: GPUTestCase {
    private var temporary: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        temporary = FileManager.default.temporaryDirectory.appendingPathComponent("velvet-presets-\(UUID().uuidString)")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: temporary)
        try super.tearDownWithError()
    }

    func testStoreFollowsXDGAndHome() {
        XCTAssertEqual(PresetStore.standard(environment: ["XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/u"]).presetsDirectory.path,
                       "/x/cfg/velvet/presets")
        XCTAssertEqual(PresetStore.standard(environment: ["HOME": "/home/u"]).presetsDirectory.path, "/home/u/.config/velvet/presets")
        XCTAssertEqual(PresetStore.standard(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/home/u"]).root.path,
                       "/home/u/.config/velvet", "a relative XDG_CONFIG_HOME is ignored, as the spec says")
    }

    func testSaveListShowDefaultDeleteRoundTrip() throws {
        let store = PresetStore.standard(environment: ["XDG_CONFIG_HOME": temporary.path])
        XCTAssertEqual(try store.list().map(\.name), BeautyPreset.builtInNames)
        XCTAssertNil(try store.defaultPreset())

        var mine = BeautyPreset.glam
        mine.makeup.lipstick.colour = RGBColour(hex: "#A01830")!
        mine.makeup.lipstick.blend = .multiply
        mine.lut = .init(source: .file("/looks/film.cube"), strength: 0.25, scope: .frame)
        mine.skin.zones.nose = 0.2
        try store.save(mine, as: "my-look")
        XCTAssertTrue(FileManager.default.fileExists(atPath: temporary.path + "/velvet/presets/my-look.json"))
        XCTAssertEqual(try store.load("my-look"), mine, "show gives back what was saved")
        XCTAssertEqual(try store.list().last, PresetStore.Listing(name: "my-look", isBuiltIn: false, isDefault: false))

        try store.setDefault("my-look")
        XCTAssertEqual(try String(contentsOf: store.defaultFile, encoding: .utf8), "my-look\n")
        XCTAssertEqual(try store.defaultPreset()?.preset, mine)
        XCTAssertEqual(try store.list().filter(\.isDefault).map(\.name), ["my-look"])

        mine.reshape.eyes = 0.1
        try store.save(mine, as: "my-look")
        XCTAssertEqual(try store.load("my-look").reshape.eyes, 0.1, "saving again replaces")

        try store.delete("my-look")
        XCTAssertEqual(try store.list().map(\.name), BeautyPreset.builtInNames)
        XCTAssertNil(try store.defaultName(), "deleting the default preset clears the default")
        XCTAssertThrowsError(try store.load("my-look")) { XCTAssertTrue("\($0)".contains("no such preset")) }

        try store.setDefault("studio")
        XCTAssertEqual(try store.defaultPreset()?.preset, .studio)
        XCTAssertThrowsError(try store.setDefault("missing"))
        XCTAssertThrowsError(try store.save(.natural, as: "natural")) { XCTAssertTrue("\($0)".contains("built-in")) }
        XCTAssertThrowsError(try store.delete("glam")) { XCTAssertTrue("\($0)".contains("built-in")) }
        for bad in ["", "../escape", ".hidden", "a/b", String(repeating: "x", count: 65)] {
            XCTAssertThrowsError(try store.save(.natural, as: bad), "name '\(bad)'")
        }
    }

    func testBuiltInsValidateAndSurviveJSON() throws {
        for name in BeautyPreset.builtInNames {
            let preset = try XCTUnwrap(BeautyPreset.builtIn(name))
            try preset.validate(file: name)
            XCTAssertEqual(try BeautyPreset.decode(preset.encoded(), file: name), preset, name)
        }
        XCTAssertTrue(BeautyPreset.none.skin.isIdentity && BeautyPreset.none.reshape.isIdentity
                      && BeautyPreset.none.makeup.isIdentity && BeautyPreset.none.lut.isIdentity)
    }

    func testPartialFilesTakeTheNonePresetsValues() throws {
        let preset = try BeautyPreset.decode(Data(#"{"lipstick": {"strength": 0.5}, "lut": {"builtIn": "warm", "strength": 0.2}}"#.utf8),
                                             file: "p.json")
        var expected = BeautyPreset.none
        expected.makeup.lipstick.strength = 0.5
        expected.lut = .init(source: .builtIn(.warm), strength: 0.2, scope: .skin)
        XCTAssertEqual(preset, expected)
        XCTAssertEqual(try BeautyPreset.decode(Data("{}".utf8), file: "empty.json"), .none)
    }

    /// A link or a FIFO at a saved preset's name is replaced, never written through (a link to a
    /// LUT file or to another preset had it overwritten, a FIFO blocked `save` even with -n, a
    /// link to /dev/null lost the preset), and refused without replacing; a preset or
    /// default-preset file is never read past what it can hold (1 GB was read whole).
    func testSavingOverALinkOrAFIFOReplacesTheEntry() throws {
        let store = PresetStore.standard(environment: ["XDG_CONFIG_HOME": temporary.path])
        try store.save(.natural, as: "base")
        let folder = store.presetsDirectory.path, cube = temporary.appendingPathComponent("my.cube").path
        let cubeText = Data("LUT_3D_SIZE 2\n".utf8)
        try cubeText.write(to: URL(fileURLWithPath: cube))
        let base = try Data(contentsOf: store.fileURL("base"))
        try FileManager.default.createSymbolicLink(atPath: folder + "/lut.json", withDestinationPath: cube)
        try FileManager.default.createSymbolicLink(atPath: folder + "/alias.json", withDestinationPath: folder + "/base.json")
        try FileManager.default.createSymbolicLink(atPath: folder + "/nul.json", withDestinationPath: "/dev/null")
        XCTAssertEqual(mkfifo(folder + "/fifo.json", 0o600), 0)
        for name in ["lut", "alias", "nul", "fifo"] {
            XCTAssertThrowsError(try store.save(.glam, as: name, replacing: false), name) { XCTAssertTrue("\($0)".contains("exists"), "\($0)") }
            try store.save(.glam, as: name, replacing: true)
            var info = stat()
            XCTAssertEqual(lstat(store.fileURL(name).path, &info), 0)
            XCTAssertEqual(info.st_mode & S_IFMT, S_IFREG, "\(name): a file in the entry's place")
            XCTAssertEqual(try store.load(name), .glam, name)
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: cube)), cubeText, "the LUT file is untouched")
        XCTAssertEqual(try Data(contentsOf: store.fileURL("base")), base, "the other preset is untouched")
        try Data(repeating: 0x20, count: (64 << 10) + 10).write(to: store.fileURL("big"))
        XCTAssertThrowsError(try store.load("big")) { XCTAssertTrue("\($0)".contains("file too large"), "\($0)") }
        try Data(repeating: 0x78, count: 100_000).write(to: store.defaultFile)
        XCTAssertThrowsError(try store.defaultName()) { XCTAssertLessThan("\($0)".count, 300, "the warning quotes a little of it") }
    }

    func testBadFilesGiveOneLineNamingFileAndField() throws {
        let cases: [(String, String)] = [
            (#"{"skin": {"strength": 0.5"#, "bad.json: not valid JSON"),
            ("", "bad.json: not valid JSON"),
            (#"[1, 2]"#, "bad.json: expected an object"),
            (#"{"skin": {"strenght": 0.5}}"#, "field skin.strenght: unknown key"),
            (#"{"sparkle": 1}"#, "field sparkle: unknown key"),
            (#"{"skin": {"zones": {"ears": 1}}}"#, "field skin.zones.ears: unknown key"),
            (#"{"skin": {"strength": 1.5}}"#, "field skin.strength: 1.5 is out of range 0.0...1.0"),
            (#"{"reshape": {"eyes": -0.1}}"#, "field reshape.eyes: -0.1 is out of range"),
            (#"{"skin": {"zones": {"nose": 2}}}"#, "field skin.zones.nose: 2.0 is out of range"),
            (#"{"lipstick": {"strength": "high"}}"#, "field lipstick.strength: expected a number"),
            (#"{"lipstick": {"colour": "red"}}"#, "field lipstick.colour: 'red' is not a colour"),
            (#"{"lipstick": {"blend": "screen"}}"#, "field lipstick.blend: 'screen' is not one of natural, multiply, soft-light"),
            (#"{"blush": {"size": 1e40}}"#, "field blush.size"),
            (#"{"lut": {"builtIn": "sepia"}}"#, "field lut.builtIn: 'sepia' is not one of"),
            (#"{"lut": {"builtIn": "warm", "file": "/x.cube"}}"#, "field lut.file: give either builtIn or file"),
            // A null section or field is a wrong type, as a null knob is (they were taken for missing).
            (#"{"skin": null}"#, "field skin: expected an object, found null"),
            (#"{"others": null}"#, "field others: expected an object, found null"),
            (#"{"skin": {"zones": null}}"#, "field skin.zones: expected an object, found null"),
            (#"{"lut": {"builtIn": null, "strength": 1}}"#, "field lut.builtIn: expected a string, found null"),
            (#"{"lut": {"file": null}}"#, "field lut.file: expected a string, found null"),
        ]
        // A preset file with a key repeated was read with the first value kept: a hand edit
        // appended after it was lost.
        for (text, expected) in [(#"{"skin": {"strength": 0.2, "strength": 0.9}}"#, "field skin.strength appears twice"),
                                 (#"{"skin": {"strength": 0.2}, "skin": {"detail": 0.5}}"#, "field skin appears twice"),
                                 (#"{"others": {"lipstick": {"strength": 0}, "sk\u0069n": {"strength": 0.3}, "skin": {}}}"#,
                                  "field others.skin appears twice")] {
            XCTAssertThrowsError(try PresetStore.decode(Data(text.utf8), file: "bad.json"), text) { error in
                XCTAssertTrue("\(error)".contains("bad.json: " + expected), "'\(error)' should contain '\(expected)'")
            }
        }
        for (text, expected) in cases {
            XCTAssertThrowsError(try BeautyPreset.decode(Data(text.utf8), file: "bad.json"), text) { error in
                XCTAssertTrue("\(error)".contains(expected), "'\(error)' should contain '\(expected)'")
                XCTAssertFalse("\(error)".contains("\n"), "one line")
            }
        }
        // The path through arrays, keys compared as JSON reads them, strings that hold braces.
        XCTAssertEqual(JSONDuplicateKeys.first(in: Data(#"{"a": [1, {"b": "}{", "c": 1, "\u0063": 2}]}"#.utf8)), "a[1].c")
        XCTAssertNil(JSONDuplicateKeys.first(in: Data(#"{"a": {"b": 1}, "c": {"b": 2}, "d": [{"b": 1}, {"b": 1}]}"#.utf8)))
        // A bad user file on disk names its path.
        let store = PresetStore.standard(environment: ["XDG_CONFIG_HOME": temporary.path])
        try FileManager.default.createDirectory(at: store.presetsDirectory, withIntermediateDirectories: true)
        try Data(#"{"blush": {"strength": 3}}"#.utf8).write(to: store.fileURL("broken"))
        XCTAssertThrowsError(try store.load("broken")) { error in
            XCTAssertTrue("\(error)".contains(store.fileURL("broken").path + ": field blush.strength"), "\(error)")
        }
    }

    /// Every built-in preset's reshape and makeup run on a real face; a picture of each.
    func testBuiltInsRenderOnARealFace() throws {
        for name in ["grace_hopper", "astronaut"] { try renderBuiltIns(on: name) }
    }

    private func renderBuiltIns(on photo: String) throws {
        let fixture = try FaceFixture.load(photo)
        let reshape = try ReshapeWarp(context: context)
        let makeup = try MakeupPaint(context: context)
        var pictures: [[UInt8]] = []
        for name in BeautyPreset.builtInNames {
            let preset = try XCTUnwrap(BeautyPreset.builtIn(name))
            let middle = try GPUImage(context: context, width: fixture.width, height: fixture.height, format: .rgba16f)
            let run = try StageRunner.run(context: context, rgba: fixture.rgba, width: fixture.width, height: fixture.height) {
                let painted = try makeup.record(on: $0, image: $1, faces: fixture.faces, settings: preset.makeup, destination: middle)
                let warped = try reshape.record(on: $0, image: middle, faces: fixture.faces, settings: preset.reshape, destination: $2)
                return painted.isEmpty ? warped : warped.isEmpty ? painted : painted.union(warped)
            }
            if name == "none" { XCTAssertEqual(run.output, run.input) } else { XCTAssertNotEqual(run.output, run.input, name) }
            pictures.append(StageRunner.rgba8(run.output))
        }
        // Crop every result to the face.
        let face = fixture.faces[0]
        let margin = Int(0.2 * face.faceSize)
        let box = PixelRegion(x: Int(face.ovalBounds.min.x) - margin, y: Int(face.ovalBounds.min.y) - margin,
                              width: Int(face.faceSize) + 2 * margin, height: Int(face.ovalBounds.max.y - face.ovalBounds.min.y) + 2 * margin)
            .clamped(width: fixture.width, height: fixture.height)!
        try StageRunner.png(ImageWriter.sideBySide(pictures, width: fixture.width, region: box), width: box.width * pictures.count,
                            height: box.height, name: "presets_\(photo)_none_natural_soft_studio_glam", scale: photo == "astronaut" ? 2 : 1)
    }
}
