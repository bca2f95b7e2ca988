import Foundation

/// Every channel's intensity in one value: what a built-in or user preset holds. Stored as
/// JSON (see `PresetCoding.swift` for the format); apply it with `skinSettings(base:)`,
/// `reshape`, `makeup` and `lut`. Free of GPU code (the preset fuzz target compiles it alone).
public struct BeautyPreset: Sendable, Equatable {
    /// The skin pipeline's user-facing knobs; everything else keeps `BeautySettings`' defaults.
    public struct Skin: Sendable, Equatable {
        public var smoothing: BeautySettings.Smoothing = .frequencySeparation
        public var strength: Float = 0
        public var detail: Float = 1
        public var spotRemoval: Float = 0
        public var sharpen: Float = 0
        public var zones = BeautySettings.ZoneStrengths()
        public init() {}

        public var isIdentity: Bool { strength == 0 && spotRemoval == 0 && sharpen == 0 }
    }

    /// A colour grade: one of `BuiltInLUT` or a `.cube` / 512x512 lookup-PNG file.
    public struct LUT: Sendable, Equatable {
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
        public init(source: Source = .none, strength: Float = 0, scope: Scope = .skin) {
            (self.source, self.strength, self.scope) = (source, strength, scope)
        }

        public var isIdentity: Bool { source == .none || strength == 0 }
    }

    public var skin = Skin()
    public var reshape = ReshapeSettings.off
    public var makeup = MakeupSettings.off
    public var lut = LUT()

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

    /// Throws `PresetError` naming `file` and the first field out of range.
    public func validate(file: String = "<preset>") throws {
        do {
            try checkRange("skin.strength", skin.strength, 0...1)
            try checkRange("skin.detail", skin.detail, 0...2)
            try checkRange("skin.spotRemoval", skin.spotRemoval, 0...1)
            try checkRange("skin.sharpen", skin.sharpen, 0...2)
            for (name, value) in skin.zones.all { try checkRange("skin.zones.\(name)", value, 0...1) }
            _ = try reshape.validated()
            _ = try makeup.validated()
            try checkRange("lut.strength", lut.strength, 0...1)
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
