import Foundation

// The preset JSON format: one section per settings type, one field per knob of its table
// (`KnobSettings.knobs`; docs/CLI.md's table is `velvet presets knobs`), plus `skin.zones`
// and the LUT's source (`builtIn` or `file`), and `others` (`PresetOverrides.swift`). Every
// section and field is optional: a missing section is that channel off, a missing field takes
// its type's `init()` value. Unknown keys, wrong types and out-of-range values are errors
// naming the field.

extension BeautyPreset {
    /// Largest preset file accepted (a complete preset is well under 2 KB).
    static let maxBytes = 64 << 10

    /// Decodes and validates preset JSON; `file` names the source in errors.
    public static func decode(_ data: Data, file: String) throws -> BeautyPreset {
        guard data.count <= maxBytes else { throw PresetError(file: file, reason: "file too large for a preset (over \(maxBytes) bytes)") }
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

    /// A section holding `knobs` (and the nested sections or special keys in `others`).
    init<Settings>(_ decoder: Decoder, knobs: [Knob<Settings>], others: [String] = []) throws {
        try self.init(decoder, allowed: knobs.map(\.key) + others)
    }

    /// Writes every knob present in the section onto `settings`.
    func read<Settings>(_ knobs: [Knob<Settings>], into settings: inout Settings) throws {
        for knob in knobs {
            let key = PresetKey(knob.key)
            guard container.contains(key) else { continue }
            let value: KnobValue
            switch knob.values {
            // Read as Double so a huge number is reported as out of range for its field.
            case .number: value = .number(Float(try container.decode(Double.self, forKey: key)))
            case .choice, .colour: value = .text(try container.decode(String.self, forKey: key))
            }
            do throws(KnobError) {
                try knob.set(value, in: &settings)
            } catch {
                throw DecodingError.dataCorrupted(.init(codingPath: container.codingPath + [key], debugDescription: error.reason))
            }
        }
    }

    /// The value at `key`, nil where the key is missing; a null there is a wrong type, as it
    /// is for a knob (`decodeIfPresent` would take it for a missing key).
    func value<T: Decodable>(_ key: String) throws -> T? {
        let key = PresetKey(key)
        return container.contains(key) ? try container.decode(T.self, forKey: key) : nil
    }

    func value<T: Decodable>(_ key: String, _ fallback: T) throws -> T {
        try value(key) ?? fallback
    }
}

extension KeyedEncodingContainer where K == PresetKey {
    /// Every knob of `knobs`, with its value in `settings`.
    mutating func encode<Settings>(_ knobs: [Knob<Settings>], of settings: Settings) throws {
        for knob in knobs {
            switch knob.value(in: settings) {
            case .number(let number): try encode(number, forKey: PresetKey(knob.key))
            case .text(let text): try encode(text, forKey: PresetKey(knob.key))
            }
        }
    }
}

extension KnobSettings {
    /// The settings of a section that holds nothing but its knobs.
    init(knobsFrom decoder: Decoder) throws {
        let section = try PresetSection(decoder, knobs: Self.knobs)
        self.init()
        try section.read(Self.knobs, into: &self)
    }

    func encodeKnobs(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: PresetKey.self)
        try container.encode(Self.knobs, of: self)
    }
}

extension BeautyPreset: Codable {
    public init(from decoder: Decoder) throws {
        let section = try PresetSection(decoder, allowed: ["skin", "reshape", "lipstick", "blush", "lut", "teeth", "eyeBrighten",
                                                           "underEye", "shine", "others"])
        self.init()
        skin = try section.value("skin", skin)
        reshape = try section.value("reshape", reshape)
        makeup.lipstick = try section.value("lipstick", makeup.lipstick)
        makeup.blush = try section.value("blush", makeup.blush)
        lut = try section.value("lut", lut)
        teeth = try section.value("teeth", teeth)
        eyeBrighten = try section.value("eyeBrighten", eyeBrighten)
        underEye = try section.value("underEye", underEye)
        shine = try section.value("shine", shine)
        others = try section.value("others", others)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: PresetKey.self)
        try container.encode(skin, forKey: PresetKey("skin"))
        try container.encode(reshape, forKey: PresetKey("reshape"))
        try container.encode(makeup.lipstick, forKey: PresetKey("lipstick"))
        try container.encode(makeup.blush, forKey: PresetKey("blush"))
        try container.encode(lut, forKey: PresetKey("lut"))
        try container.encode(teeth, forKey: PresetKey("teeth"))
        try container.encode(eyeBrighten, forKey: PresetKey("eyeBrighten"))
        try container.encode(underEye, forKey: PresetKey("underEye"))
        try container.encode(shine, forKey: PresetKey("shine"))
        if !others.isEmpty { try container.encode(others, forKey: PresetKey("others")) } // only the fields it sets
    }
}

extension BeautyPreset.Skin: Codable {
    public init(from decoder: Decoder) throws {
        let section = try PresetSection(decoder, knobs: Self.knobs, others: ["zones"])
        self.init()
        try section.read(Self.knobs, into: &self)
        zones = try section.value("zones", zones)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: PresetKey.self)
        try container.encode(Self.knobs, of: self)
        try container.encode(zones, forKey: PresetKey("zones"))
    }
}

extension BeautySettings.ZoneStrengths: Codable {
    public init(from decoder: Decoder) throws { try self.init(knobsFrom: decoder) }
    public func encode(to encoder: Encoder) throws { try encodeKnobs(to: encoder) }
}

extension ReshapeSettings: Codable {
    public init(from decoder: Decoder) throws { try self.init(knobsFrom: decoder) }
    public func encode(to encoder: Encoder) throws { try encodeKnobs(to: encoder) }
}

extension MakeupSettings.Lipstick: Codable {
    public init(from decoder: Decoder) throws { try self.init(knobsFrom: decoder) }
    public func encode(to encoder: Encoder) throws { try encodeKnobs(to: encoder) }
}

extension MakeupSettings.Blush: Codable {
    public init(from decoder: Decoder) throws { try self.init(knobsFrom: decoder) }
    public func encode(to encoder: Encoder) throws { try encodeKnobs(to: encoder) }
}

extension TeethSettings: Codable {
    public init(from decoder: Decoder) throws { try self.init(knobsFrom: decoder) }
    public func encode(to encoder: Encoder) throws { try encodeKnobs(to: encoder) }
}

extension EyeBrightenSettings: Codable {
    public init(from decoder: Decoder) throws { try self.init(knobsFrom: decoder) }
    public func encode(to encoder: Encoder) throws { try encodeKnobs(to: encoder) }
}

extension UnderEyeSettings: Codable {
    public init(from decoder: Decoder) throws { try self.init(knobsFrom: decoder) }
    public func encode(to encoder: Encoder) throws { try encodeKnobs(to: encoder) }
}

extension ShineSettings: Codable {
    public init(from decoder: Decoder) throws { try self.init(knobsFrom: decoder) }
    public func encode(to encoder: Encoder) throws { try encodeKnobs(to: encoder) }
}

extension BeautyPreset.LUT: Codable {
    public init(from decoder: Decoder) throws {
        let section = try PresetSection(decoder, knobs: Self.knobs, others: ["builtIn", "file"])
        self.init()
        let builtIn: BuiltInLUT?
        if let name: String = try section.value("builtIn") {
            guard let lut = BuiltInLUT(rawValue: name) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [PresetKey("builtIn")],
                                                        debugDescription: "'\(name)' is not one of \(BuiltInLUT.allCases.map(\.rawValue).joined(separator: ", "))"))
            }
            builtIn = lut
        } else {
            builtIn = nil
        }
        let file: String? = try section.value("file")
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
        try section.read(Self.knobs, into: &self)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: PresetKey.self)
        switch source {
        case .none: break
        case .builtIn(let name): try container.encode(name.rawValue, forKey: PresetKey("builtIn"))
        case .file(let path): try container.encode(path, forKey: PresetKey("file"))
        }
        try container.encode(Self.knobs, of: self)
    }
}
