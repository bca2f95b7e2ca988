import Foundation

// The preset JSON format. Every section and field is optional: a missing section is that
// channel off, a missing field takes its value from the `none` preset (strengths 0, other
// knobs at their standard defaults). Unknown keys, wrong types and out-of-range values are
// errors naming the field.
//
// {
//   "skin":     { "smoothing": "freqsep" | "bilateral", "strength": 0...1, "detail": 0...2,
//                 "spotRemoval": 0...1, "sharpen": 0...2,
//                 "zones": { "forehead", "cheeks", "chin", "underEye", "nose", "upperLip", "elsewhere": 0...1 } },
//   "reshape":  { "eyes": 0...1, "slim": 0...1 },
//   "lipstick": { "colour": "#RRGGBB", "strength": 0...1, "blend": "natural" | "multiply" | "soft-light",
//                 "feather": 0.002...0.1 },
//   "blush":    { "colour": "#RRGGBB", "strength": 0...1, "size": 0.03...0.3 },
//   "lut":      { "builtIn": "gentle-brighten" | "warm" | "cool" | "soft-matte"  (or)  "file": "/path/x.cube",
//                 "strength": 0...1, "scope": "skin" | "frame" }
// }

extension BeautyPreset {
    /// Largest preset file accepted (a complete preset is well under 2 KB).
    static let maxBytes = 64 << 10

    /// Decodes and validates preset JSON; `file` names the source in errors.
    public static func decode(_ data: Data, file: String) throws -> BeautyPreset {
        guard data.count <= maxBytes else { throw PresetError(file: file, reason: "file too large for a preset (\(data.count) bytes)") }
        let preset: BeautyPreset
        do {
            preset = try JSONDecoder().decode(BeautyPreset.self, from: data)
        } catch let error as DecodingError {
            throw PresetError(file: file, reason: Self.explain(error))
        } catch {
            throw PresetError(file: file, reason: "not valid preset JSON (\(error))")
        }
        try preset.validate(file: file)
        return preset
    }

    /// Pretty-printed JSON with every field, keys sorted.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    private static func explain(_ error: DecodingError) -> String {
        func field(_ path: [CodingKey]) -> String {
            let names = path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return names.isEmpty ? "" : "field " + names.joined(separator: ".").replacingOccurrences(of: ".[", with: "[") + ": "
        }
        switch error {
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "not valid JSON (\(context.debugDescription))" }
            return field(context.codingPath) + context.debugDescription
        case .typeMismatch(let type, let context):
            return field(context.codingPath) + "expected \(Self.typeName(type))"
        case .valueNotFound(let type, let context):
            return field(context.codingPath) + "expected \(Self.typeName(type)), found null"
        case .keyNotFound(let key, let context):
            return field(context.codingPath + [key]) + "missing"
        @unknown default:
            return "\(error)"
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is Float.Type, is Double.Type: return "a number"
        case is String.Type: return "a string"
        default: return "an object"
        }
    }
}

/// Any JSON key, so a decoder can list the keys it was given and refuse unknown ones.
struct PresetKey: CodingKey {
    let stringValue: String
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}

/// A JSON object section with strict keys and range-checked numbers.
struct PresetSection {
    let container: KeyedDecodingContainer<PresetKey>

    init(_ decoder: Decoder, allowed: [String]) throws {
        container = try decoder.container(keyedBy: PresetKey.self)
        for key in container.allKeys where !allowed.contains(key.stringValue) {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [key],
                                                    debugDescription: "unknown key (allowed: \(allowed.joined(separator: ", ")))"))
        }
    }

    func number(_ key: String, _ fallback: Float, _ range: ClosedRange<Float>) throws -> Float {
        // Read as Double so a huge number is reported as out of range for its field.
        guard let wide = try container.decodeIfPresent(Double.self, forKey: PresetKey(key)) else { return fallback }
        let value = Float(wide)
        guard value.isFinite, range.contains(value) else {
            throw DecodingError.dataCorrupted(.init(codingPath: container.codingPath + [PresetKey(key)],
                                                    debugDescription: "\(value) is out of range \(range.lowerBound)...\(range.upperBound)"))
        }
        return value
    }

    func value<T: Decodable>(_ key: String, _ fallback: T) throws -> T {
        try container.decodeIfPresent(T.self, forKey: PresetKey(key)) ?? fallback
    }

    /// A string naming one of `T`'s cases.
    func choice<T: RawRepresentable & CaseIterable>(_ key: String, _ fallback: T) throws -> T where T.RawValue == String {
        guard let text = try container.decodeIfPresent(String.self, forKey: PresetKey(key)) else { return fallback }
        guard let value = T(rawValue: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: container.codingPath + [PresetKey(key)],
                                                    debugDescription: "'\(text)' is not one of \(T.allCases.map(\.rawValue).joined(separator: ", "))"))
        }
        return value
    }
}

extension BeautyPreset: Codable {
    public init(from decoder: Decoder) throws {
        let section = try PresetSection(decoder, allowed: ["skin", "reshape", "lipstick", "blush", "lut"])
        self.init()
        skin = try section.value("skin", skin)
        reshape = try section.value("reshape", reshape)
        makeup.lipstick = try section.value("lipstick", makeup.lipstick)
        makeup.blush = try section.value("blush", makeup.blush)
        lut = try section.value("lut", lut)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: PresetKey.self)
        try container.encode(skin, forKey: PresetKey("skin"))
        try container.encode(reshape, forKey: PresetKey("reshape"))
        try container.encode(makeup.lipstick, forKey: PresetKey("lipstick"))
        try container.encode(makeup.blush, forKey: PresetKey("blush"))
        try container.encode(lut, forKey: PresetKey("lut"))
    }
}

extension BeautyPreset.Skin: Codable {
    public init(from decoder: Decoder) throws {
        let section = try PresetSection(decoder, allowed: ["smoothing", "strength", "detail", "spotRemoval", "sharpen", "zones"])
        self.init()
        smoothing = try section.choice("smoothing", smoothing)
        strength = try section.number("strength", strength, 0...1)
        detail = try section.number("detail", detail, 0...2)
        spotRemoval = try section.number("spotRemoval", spotRemoval, 0...1)
        sharpen = try section.number("sharpen", sharpen, 0...2)
        zones = try section.value("zones", zones)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: PresetKey.self)
        try container.encode(smoothing.rawValue, forKey: PresetKey("smoothing"))
        try container.encode(strength, forKey: PresetKey("strength"))
        try container.encode(detail, forKey: PresetKey("detail"))
        try container.encode(spotRemoval, forKey: PresetKey("spotRemoval"))
        try container.encode(sharpen, forKey: PresetKey("sharpen"))
        try container.encode(zones, forKey: PresetKey("zones"))
    }
}

extension BeautySettings.ZoneStrengths: Codable {
    public init(from decoder: Decoder) throws {
        let defaults = BeautySettings.ZoneStrengths()
        let section = try PresetSection(decoder, allowed: defaults.all.map(\.0))
        self.init()
        forehead = try section.number("forehead", defaults.forehead, 0...1)
        cheeks = try section.number("cheeks", defaults.cheeks, 0...1)
        chin = try section.number("chin", defaults.chin, 0...1)
        underEye = try section.number("underEye", defaults.underEye, 0...1)
        nose = try section.number("nose", defaults.nose, 0...1)
        upperLip = try section.number("upperLip", defaults.upperLip, 0...1)
        elsewhere = try section.number("elsewhere", defaults.elsewhere, 0...1)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: PresetKey.self)
        for (name, value) in all { try container.encode(value, forKey: PresetKey(name)) }
    }
}

extension ReshapeSettings: Codable {
    public init(from decoder: Decoder) throws {
        let section = try PresetSection(decoder, allowed: ["eyes", "slim"])
        self.init(eyes: try section.number("eyes", 0, 0...1), slim: try section.number("slim", 0, 0...1))
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: PresetKey.self)
        try container.encode(eyes, forKey: PresetKey("eyes"))
        try container.encode(slim, forKey: PresetKey("slim"))
    }
}

extension MakeupSettings.Lipstick: Codable {
    public init(from decoder: Decoder) throws {
        let section = try PresetSection(decoder, allowed: ["colour", "strength", "blend", "feather"])
        self.init()
        colour = try section.value("colour", colour)
        strength = try section.number("strength", strength, 0...1)
        blend = try section.choice("blend", blend)
        feather = try section.number("feather", feather, 0.002...0.1)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: PresetKey.self)
        try container.encode(colour, forKey: PresetKey("colour"))
        try container.encode(strength, forKey: PresetKey("strength"))
        try container.encode(blend.rawValue, forKey: PresetKey("blend"))
        try container.encode(feather, forKey: PresetKey("feather"))
    }
}

extension MakeupSettings.Blush: Codable {
    public init(from decoder: Decoder) throws {
        let section = try PresetSection(decoder, allowed: ["colour", "strength", "size"])
        self.init()
        colour = try section.value("colour", colour)
        strength = try section.number("strength", strength, 0...1)
        size = try section.number("size", size, 0.03...0.3)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: PresetKey.self)
        try container.encode(colour, forKey: PresetKey("colour"))
        try container.encode(strength, forKey: PresetKey("strength"))
        try container.encode(size, forKey: PresetKey("size"))
    }
}

extension BeautyPreset.LUT: Codable {
    public init(from decoder: Decoder) throws {
        let section = try PresetSection(decoder, allowed: ["builtIn", "file", "strength", "scope"])
        self.init()
        let builtIn: BuiltInLUT? = try section.container.contains(PresetKey("builtIn")) ? section.choice("builtIn", .warm) : nil
        let file: String? = try section.value("file", nil)
        switch (builtIn, file) {
        case (let name?, nil): source = .builtIn(name)
        case (nil, let path?):
            guard !path.isEmpty else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [PresetKey("file")],
                                                        debugDescription: "empty path"))
            }
            source = .file(path)
        case (nil, nil): source = .none
        case (.some, .some):
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [PresetKey("file")],
                                                    debugDescription: "give either builtIn or file, not both"))
        }
        strength = try section.number("strength", strength, 0...1)
        scope = try section.choice("scope", scope)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: PresetKey.self)
        switch source {
        case .none: break
        case .builtIn(let name): try container.encode(name.rawValue, forKey: PresetKey("builtIn"))
        case .file(let path): try container.encode(path, forKey: PresetKey("file"))
        }
        try container.encode(strength, forKey: PresetKey("strength"))
        try container.encode(scope.rawValue, forKey: PresetKey("scope"))
    }
}
