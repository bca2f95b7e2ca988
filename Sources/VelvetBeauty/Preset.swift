import Foundation

/// Every channel's intensity in one value: what a built-in or user preset holds. Stored as
/// JSON (see `PresetCoding.swift` for the format); apply it with `skinSettings(base:)`,
/// `reshape`, `makeup` and `lut`. Free of GPU code (the preset fuzz target compiles it alone).
public struct BeautyPreset: KnobSettings, Equatable {
    /// The skin pipeline's user-facing knobs; everything else keeps `BeautySettings`' defaults.
    public struct Skin: KnobSettings, Equatable {
        public var smoothing: BeautySettings.Smoothing = .frequencySeparation
        public var strength: Float = 0
        public var detail: Float = 1
        public var spotRemoval: Float = 0
        public var sharpen: Float = 0
        public var zones = BeautySettings.ZoneStrengths()
        public init() {}

        /// The user-facing part of `settings`.
        init(_ settings: BeautySettings) {
            (smoothing, strength, detail) = (settings.smoothing, settings.strength, settings.detail)
            (spotRemoval, sharpen, zones) = (settings.spotRemoval, settings.sharpen, settings.zones)
        }

        public var isIdentity: Bool { strength == 0 && spotRemoval == 0 && sharpen == 0 }

        public static var knobs: [Knob<Skin>] {
            [.choice("smoothing", flag: "--smoothing", \.smoothing, "skin smoothing method",
                     aliases: ["frequency-separation": .frequencySeparation]),
             .number("strength", flag: "--strength", \.strength, 0...1,
                     "share of each face's blotch amplitude removed: none at 0, 1 - sqrt(0.1) = 68 % at 1 "
                         + "(M5 target (1 - X (1 - sqrt(0.1)))^2, 0.433 at 0.5); 0 turns smoothing off"),
             .number("detail", flag: "--detail", \.detail, 0...2, "frequency separation: fine texture kept (1 keeps it all)"),
             .number("spotRemoval", flag: "--spots", \.spotRemoval, 0...1, "spot removal strength"),
             .number("sharpen", flag: "--sharpen", \.sharpen, 0...2, "global sharpen after the composite")]
        }
    }

    /// A colour grade: one of `BuiltInLUT` or a `.cube` / 512x512 lookup-PNG file.
    public struct LUT: KnobSettings, Equatable {
        public enum Source: Sendable, Equatable {
            case none
            case builtIn(BuiltInLUT)
            case file(String)
        }

        public enum Scope: String, Sendable, CaseIterable {
            /// Through the skin mask (whitening, warming the skin only).
            case skin
            /// The whole frame.
            case frame
        }

        public var source: Source = .none
        /// 0...1, linear from identity to the full LUT.
        public var strength: Float = 0
        public var scope: Scope = .skin
        public init() {}
        public init(source: Source = .none, strength: Float = 0, scope: Scope = .skin) {
            (self.source, self.strength, self.scope) = (source, strength, scope)
        }

        public var isIdentity: Bool { source == .none || strength == 0 }

        /// The source (`builtIn` or `file`, `--lut`) is not a knob: it is one of two keys.
        public static var knobs: [Knob<LUT>] {
            [.number("strength", flag: "--lut-strength", \.strength, 0...1,
                     "the grade's share, from none to the full LUT (--lut sets it to 1; a preset's LUT without it has no effect)"),
             .choice("scope", flag: "--lut-on", \.scope, "skin: through the skin mask; frame: the whole frame")]
        }
    }

    public var skin = Skin()
    public var reshape = ReshapeSettings.off
    public var makeup = MakeupSettings.off
    public var lut = LUT()
    public var teeth = TeethSettings()
    public var eyeBrighten = EyeBrightenSettings()
    public var underEye = UnderEyeSettings()
    public var shine = ShineSettings()
    /// The fields that differ for every face but the largest (`othersPreset`); empty: none do.
    public var others = PresetOverrides()

    public init() {}

    /// Everything off.
    public static let none = BeautyPreset()

    /// `base` with this preset's skin knobs written over it.
    public func skinSettings(base: BeautySettings = .standard) -> BeautySettings {
        var settings = base
        settings.smoothing = skin.smoothing
        settings.strength = skin.strength
        settings.detail = skin.detail
        settings.spotRemoval = skin.spotRemoval
        settings.sharpen = skin.sharpen
        settings.zones = skin.zones
        return settings
    }

    /// Every section's knobs, keyed by their preset field ("skin.strength"): the flags, the
    /// help and docs/CLI.md's table come from here.
    public static var knobs: [Knob<BeautyPreset>] {
        BeautyPreset.Skin.knobs.map { $0.lifted(into: \.skin, section: "skin") }
            + BeautySettings.ZoneStrengths.knobs.map { $0.lifted(into: \.skin.zones, section: "skin.zones") }
            + ReshapeSettings.knobs.map { $0.lifted(into: \.reshape, section: "reshape") }
            + MakeupSettings.Lipstick.knobs.map { $0.lifted(into: \.makeup.lipstick, section: "lipstick") }
            + MakeupSettings.Blush.knobs.map { $0.lifted(into: \.makeup.blush, section: "blush") }
            + LUT.knobs.map { $0.lifted(into: \.lut, section: "lut") }
            + TeethSettings.knobs.map { $0.lifted(into: \.teeth, section: "teeth") }
            + EyeBrightenSettings.knobs.map { $0.lifted(into: \.eyeBrighten, section: "eyeBrighten") }
            + UnderEyeSettings.knobs.map { $0.lifted(into: \.underEye, section: "underEye") }
            + ShineSettings.knobs.map { $0.lifted(into: \.shine, section: "shine") }
    }

    /// Throws `PresetError` naming `file` and the first field out of range.
    public func validate(file: String = "<preset>") throws {
        do {
            try checkKnobs(prefix: "")
            if case .file(let path) = lut.source, path.isEmpty {
                throw BeautyError.invalidSettings("lut.file is empty")
            }
        } catch BeautyError.invalidSettings(let detail) {
            throw PresetError(file: file, reason: detail)
        }
    }
}

/// A preset file (or name) that cannot be used: one line naming the file and the field.
public struct PresetError: Error, CustomStringConvertible, Equatable {
    public let file: String
    public let reason: String
    public init(file: String, reason: String) { (self.file, self.reason) = (file, reason) }
    public var description: String {
        "preset \(file): " + reason.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
