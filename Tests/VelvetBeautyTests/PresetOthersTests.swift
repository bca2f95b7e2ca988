import Foundation
import VelvetBeauty
import XCTest

/// A preset's `others` section (the settings of every face but the largest): its JSON round
/// trip, what it resolves to, and the fields it refuses.
final class PresetOthersTests: XCTestCase {
    func testOthersRoundTripsAndOverridesOnlyItsFields() throws {
        let text = #"""
        {"skin": {"strength": 0.7, "spotRemoval": 0.5, "sharpen": 0.2}, "lipstick": {"strength": 0.4},
         "others": {"skin": {"strength": 0, "zones": {"nose": 0.2}}, "lipstick": {"colour": "#9E1F33"}, "teeth": {"strength": 0.5}}}
        """#
        let preset = try BeautyPreset.decode(Data(text.utf8), file: "p.json")
        XCTAssertEqual(preset.others.values.count, 4)
        XCTAssertEqual(try BeautyPreset.decode(preset.encoded(), file: "p.json"), preset, "show/save give back what was read")
        let encoded = try XCTUnwrap(try JSONSerialization.jsonObject(with: preset.encoded()) as? [String: Any])
        XCTAssertEqual((encoded["others"] as? [String: Any])?.keys.sorted(), ["lipstick", "skin", "teeth"], "only the fields set")

        let theirs = try XCTUnwrap(preset.othersPreset)
        XCTAssertEqual(theirs.skin.strength, 0)
        XCTAssertEqual(theirs.skin.zones.nose, 0.2)
        XCTAssertEqual(theirs.makeup.lipstick.colour, RGBColour(hex: "#9E1F33"))
        XCTAssertEqual(theirs.teeth.strength, 0.5)
        // The fields it does not name are the preset's own.
        XCTAssertEqual(theirs.skin.spotRemoval, 0.5)
        XCTAssertEqual(theirs.skin.sharpen, 0.2)
        XCTAssertEqual(theirs.makeup.lipstick.strength, 0.4)
        XCTAssertEqual(theirs.skin.zones.forehead, preset.skin.zones.forehead)
        XCTAssertTrue(theirs.others.isEmpty)
    }

    /// `presets save` then `show`, and a preset file by its path (`--preset ./p.json`).
    func testTheStoreKeepsOthers() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("velvet-others-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let store = PresetStore(root: root)
        var preset = BeautyPreset.natural
        try preset.others.set("skin.strength", .number(0.9))
        try preset.others.set("blush.colour", .text("#C2185B"))
        try store.save(preset, as: "group")
        XCTAssertEqual(try store.load("group"), preset)
        XCTAssertEqual(try store.resolve(store.fileURL("group").path), preset, "a path holding / is read as a file")
        XCTAssertThrowsError(try store.resolve(root.appendingPathComponent("missing.json").path)) {
            XCTAssertTrue("\($0)".contains("missing.json: cannot read the file"), "\($0)")
        }
    }

    func testWithoutOthersNothingChanges() throws {
        for name in BeautyPreset.builtInNames {
            let preset = try XCTUnwrap(BeautyPreset.builtIn(name))
            XCTAssertNil(preset.othersPreset, name)
            let encoded = try XCTUnwrap(try JSONSerialization.jsonObject(with: preset.encoded()) as? [String: Any])
            XCTAssertNil(encoded["others"], "\(name): no others section written")
        }
        // A section that sets nothing, or only the preset's own values, is one pass: the same render.
        XCTAssertNil(try BeautyPreset.decode(Data(#"{"others": {}}"#.utf8), file: "p.json").othersPreset)
        XCTAssertNil(try BeautyPreset.decode(Data(#"{"skin": {"strength": 0.5}, "others": {"skin": {"strength": 0.5}}}"#.utf8),
                                             file: "p.json").othersPreset)
    }

    func testBadOthersFieldsGiveOneLineNamingTheField() {
        let cases: [(String, String)] = [
            (#"{"others": {"lut": {"builtIn": "warm", "strength": 1}}}"#, "field others.lut: the LUT grades the whole frame"),
            (#"{"others": {"lut": {"strength": 0.5}}}"#, "field others.lut: the LUT grades the whole frame"),
            (#"{"others": {"skin": {"sharpen": 0.5}}}"#, "field others.skin.sharpen: sharpening acts on the whole frame"),
            (#"{"others": {"skin": {"strenght": 0}}}"#, "field others.skin.strenght: unknown key (allowed: detail, smoothing, spotRemoval, strength, zones)"),
            (#"{"others": {"sparkle": 1}}"#, "field others.sparkle: unknown key (allowed: blush, eyeBrighten, lipstick, reshape, shine, skin, teeth, underEye"),
            (#"{"others": {"others": {}}}"#, "field others.others: unknown key"),
            (#"{"others": {"skin": {"strength": 1.5}}}"#, "field others.skin.strength: 1.5 is out of range 0.0...1.0"),
            (#"{"others": {"skin": {"zones": {"ears": 1}}}}"#, "field others.skin.zones.ears: unknown key"),
            (#"{"others": {"lipstick": {"blend": "screen"}}}"#, "field others.lipstick.blend: 'screen' is not one of"),
            (#"{"others": {"skin": 0}}"#, "field others.skin: expected an object"),
            (#"{"others": {"skin": {"strength": "high"}}}"#, "field others.skin.strength: expected a number"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try BeautyPreset.decode(Data(text.utf8), file: "bad.json"), text) { error in
                XCTAssertTrue("\(error)".contains("bad.json: " + expected), "'\(error)' should contain '\(expected)'")
                XCTAssertFalse("\(error)".contains("\n"), "one line")
            }
        }
    }

    func testSettingInCodeIsCheckedToo() throws {
        var others = PresetOverrides()
        try others.set("reshape.eyes", .number(0.3))
        XCTAssertThrowsError(try others.set("lut.strength", .number(1))) { XCTAssertTrue("\($0)".contains("others.lut.strength")) }
        XCTAssertThrowsError(try others.set("skin.strength", .number(3))) { XCTAssertTrue("\($0)".contains("out of range")) }
        XCTAssertThrowsError(try others.set("skin.nothing", .number(0))) { XCTAssertTrue("\($0)".contains("unknown field")) }
        XCTAssertEqual(others.values, ["reshape.eyes": .number(0.3)])
    }
}
