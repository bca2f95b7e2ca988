import Foundation

/// A preset's `others` section: the fields whose values differ for every face but the largest.
/// It holds only the fields it sets, by their preset key ("skin.strength"), so every other
/// field of those faces is the preset's own; any knob of `BeautyPreset.knobs` may be set, except
/// the frame-wide ones. Free of GPU code (the preset fuzz target compiles it).
public struct PresetOverrides: Sendable, Equatable {
    /// The fields set, by preset key.
    public private(set) var values: [String: KnobValue] = [:]

    public init() {}

    public var isEmpty: Bool { values.isEmpty }

    /// Sections and fields that act on the whole frame at once, so they cannot differ per face,
    /// with why.
    public static let frameWide: [String: String] = [
        "lut": "the LUT grades the whole frame, so it cannot differ per face; set it at the top level",
        "skin.sharpen": "sharpening acts on the whole frame, so it cannot differ per face; set it at the top level",
    ]

    /// Sets the field `key`; throws `BeautyError.invalidSettings` naming it for a key that is
    /// no knob, a frame-wide one, or a value the knob refuses.
    public mutating func set(_ key: String, _ value: KnobValue) throws {
        if let problem = Self.problem(key, value) { throw BeautyError.invalidSettings("others.\(key): \(problem)") }
        values[key] = value
    }

    /// Why `key` cannot take `value` here, or nil.
    private static func problem(_ key: String, _ value: KnobValue) -> String? {
        if let reason = frameWideReason(key) { return reason }
        guard let knob = BeautyPreset.knobs.first(where: { $0.key == key }) else { return "unknown field" }
        var scratch = BeautyPreset()
        do throws(KnobError) {
            try knob.set(value, in: &scratch)
            return nil
        } catch {
            return error.reason
        }
    }

    /// `preset` with these fields written over it.
    public func applied(to preset: BeautyPreset) -> BeautyPreset {
        var result = preset
        for knob in BeautyPreset.knobs {
            guard let value = values[knob.key] else { continue }
            try? knob.set(value, in: &result) // checked by `set`
        }
        return result
    }

    static func frameWideReason(_ key: String) -> String? {
        frameWide.first { key == $0.key || key.hasPrefix($0.key + ".") }?.value
    }
}

extension BeautyPreset {
    /// The settings of every face but the largest: nil when the preset has no `others` section,
    /// or one that changes nothing (then every face gets the preset's own settings, in one pass).
    public var othersPreset: BeautyPreset? {
        guard !others.isEmpty else { return nil }
        var own = self
        own.others = PresetOverrides()
        let theirs = others.applied(to: own)
        return theirs == own ? nil : theirs
    }
}

// JSON: the same nested sections as the top level ({"skin": {"strength": 0}}), holding only
// the fields set; decoding refuses unknown keys, frame-wide ones and bad values, naming the
// field ("others.skin.strenght").
extension PresetOverrides: Codable {
    public init(from decoder: Decoder) throws {
        self.init()
        try read(try decoder.container(keyedBy: PresetKey.self), prefix: "")
    }

    /// Reads the object at `prefix` ("" for the section itself, "skin." inside it).
    private mutating func read(_ container: KeyedDecodingContainer<PresetKey>, prefix: String) throws {
        let knobs = BeautyPreset.knobs
        for key in container.allKeys {
            let path = prefix + key.stringValue
            func refuse(_ reason: String) -> DecodingError {
                DecodingError.dataCorrupted(.init(codingPath: container.codingPath + [key], debugDescription: reason))
            }
            if let reason = Self.frameWideReason(path) { throw refuse(reason) }
            if let knob = knobs.first(where: { $0.key == path }) {
                let value: KnobValue
                switch knob.values {
                case .number: value = .number(Float(try container.decode(Double.self, forKey: key)))
                case .choice, .colour: value = .text(try container.decode(String.self, forKey: key))
                }
                if let problem = Self.problem(path, value) { throw refuse(problem) }
                values[path] = value
            } else if knobs.contains(where: { $0.key.hasPrefix(path + ".") }) {
                try read(try container.nestedContainer(keyedBy: PresetKey.self, forKey: key), prefix: path + ".")
            } else {
                let allowed = Set(knobs.compactMap { knob -> String? in
                    guard knob.key.hasPrefix(prefix) else { return nil }
                    let name = String(knob.key.dropFirst(prefix.count).prefix { $0 != "." })
                    return Self.frameWideReason(prefix + name) == nil ? name : nil
                })
                throw refuse("unknown key (allowed: \(allowed.sorted().joined(separator: ", ")))")
            }
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: PresetKey.self)
        try write(into: &container, prefix: "")
    }

    /// Writes the fields under `prefix`, each section as a nested object.
    private func write(into container: inout KeyedEncodingContainer<PresetKey>, prefix: String) throws {
        let keys = values.keys.filter { $0.hasPrefix(prefix) }.map { $0.dropFirst(prefix.count) }
        for name in Set(keys.map { String($0.prefix { $0 != "." }) }).sorted() {
            let path = prefix + name
            switch values[path] {
            case .number(let number)?: try container.encode(number, forKey: PresetKey(name))
            case .text(let text)?: try container.encode(text, forKey: PresetKey(name))
            case nil:
                var nested = container.nestedContainer(keyedBy: PresetKey.self, forKey: PresetKey(name))
                try write(into: &nested, prefix: path + ".")
            }
        }
    }
}
