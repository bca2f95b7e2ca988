/// One setting a user can change, declared once: its preset key, its command-line flag, the
/// values it takes and its help. Validation, the strict preset JSON coding, the CLI flags,
/// `velvet help` and the knob table in docs/CLI.md (`velvet presets knobs`) are all made from
/// the settings types' `knobs` tables; the default is the type's `init()` value, which is
/// what a preset's missing field takes. Free of GPU code (the preset fuzz target compiles it).
public struct Knob<Settings>: @unchecked Sendable { // the key paths it holds are immutable
    /// The key inside the settings' preset section ("strength" in `skin.strength`).
    public let key: String
    /// The command-line flag, when there is one.
    public let flag: String?
    public let values: KnobValues
    public let help: String
    private let reader: (Settings) -> KnobValue
    private let writer: (inout Settings, KnobValue) throws(KnobError) -> Void
    private let checker: (Settings) throws(KnobError) -> Void

    private init(key: String, flag: String?, values: KnobValues, help: String, reader: @escaping (Settings) -> KnobValue,
                 writer: @escaping (inout Settings, KnobValue) throws(KnobError) -> Void,
                 checker: @escaping (Settings) throws(KnobError) -> Void) {
        (self.key, self.flag, self.values, self.help) = (key, flag, values, help)
        (self.reader, self.writer, self.checker) = (reader, writer, checker)
    }

    /// The knob's value in `settings`.
    public func value(in settings: Settings) -> KnobValue { reader(settings) }

    /// Writes `value`; throws `KnobError` (the reason, without the knob's name) for a value
    /// of the wrong kind, out of range, or not one of the choices.
    public func set(_ value: KnobValue, in settings: inout Settings) throws(KnobError) { try writer(&settings, value) }

    /// Throws `KnobError` when the value `settings` holds is outside the knob's values (a
    /// value set in code is not checked on the way in).
    public func check(_ settings: Settings) throws(KnobError) { try checker(settings) }

    /// This knob of the settings at `path` inside `Outer`, its key prefixed with `section.`.
    public func lifted<Outer>(into path: WritableKeyPath<Outer, Settings> & Sendable, section: String) -> Knob<Outer> {
        let (reader, writer, checker) = (self.reader, self.writer, self.checker)
        return Knob<Outer>(key: section + "." + key, flag: flag, values: values, help: help,
                           reader: { reader($0[keyPath: path]) },
                           writer: { outer, value throws(KnobError) in try writer(&outer[keyPath: path], value) },
                           checker: { outer throws(KnobError) in try checker(outer[keyPath: path]) })
    }

    /// A number in `range`.
    public static func number(_ key: String, flag: String? = nil, _ path: WritableKeyPath<Settings, Float> & Sendable,
                              _ range: ClosedRange<Float>, _ help: String) -> Knob {
        func inRange(_ number: Float) throws(KnobError) {
            guard number.isFinite, range.contains(number) else {
                throw KnobError("\(number) is out of range \(range.lowerBound)...\(range.upperBound)")
            }
        }
        return Knob(key: key, flag: flag, values: .number(range), help: help, reader: { .number($0[keyPath: path]) },
                    writer: { settings, value throws(KnobError) in
                        guard case .number(let number) = value else { throw KnobError("expected a number") }
                        try inRange(number)
                        settings[keyPath: path] = number
                    },
                    checker: { settings throws(KnobError) in try inRange(settings[keyPath: path]) })
    }

    /// One of `Choice`'s cases, by raw value (or by one of `aliases`).
    public static func choice<Choice: RawRepresentable & CaseIterable>(
        _ key: String, flag: String? = nil, _ path: WritableKeyPath<Settings, Choice> & Sendable, _ help: String,
        aliases: [String: Choice] = [:]
    ) -> Knob where Choice.RawValue == String {
        let names = Choice.allCases.map(\.rawValue)
        return Knob(key: key, flag: flag, values: .choice(names), help: help, reader: { .text($0[keyPath: path].rawValue) },
                    writer: { settings, value throws(KnobError) in
                        guard case .text(let name) = value else { throw KnobError("expected a string") }
                        guard let choice = Choice(rawValue: name) ?? aliases[name] else {
                            throw KnobError("'\(name)' is not one of \(names.joined(separator: ", "))")
                        }
                        settings[keyPath: path] = choice
                    },
                    checker: { _ in })
    }

    /// A colour written "#RRGGBB".
    public static func colour(_ key: String, flag: String? = nil, _ path: WritableKeyPath<Settings, RGBColour> & Sendable,
                              _ help: String) -> Knob {
        Knob(key: key, flag: flag, values: .colour, help: help, reader: { .text($0[keyPath: path].hex) },
             writer: { settings, value throws(KnobError) in
                 guard case .text(let text) = value else { throw KnobError("expected a string") }
                 guard let colour = RGBColour(hex: text) else { throw KnobError("'\(text)' is not a colour; write \"#RRGGBB\"") }
                 settings[keyPath: path] = colour
             },
             checker: { settings throws(KnobError) in
                 // A colour made in code may hold channels outside 0...1, which "#RRGGBB" would clamp.
                 let colour = settings[keyPath: path]
                 for channel in [colour.red, colour.green, colour.blue] where !(channel.isFinite && (0...1).contains(channel)) {
                     throw KnobError("\(channel) is out of range 0.0...1.0")
                 }
             })
    }
}

/// What a knob takes.
public enum KnobValues: Sendable, Equatable {
    case number(ClosedRange<Float>)
    /// One of these names.
    case choice([String])
    /// "#RRGGBB".
    case colour
}

/// A knob's value: a number, or the text of a choice or colour.
public enum KnobValue: Sendable, Equatable, CustomStringConvertible {
    case number(Float)
    case text(String)

    public var description: String {
        switch self {
        case .number(let number): return number.description
        case .text(let text): return text
        }
    }
}

/// Why a knob refused a value (the caller adds the knob's name: a preset field, a flag).
public struct KnobError: Error, Sendable, Equatable {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
}

/// A settings type whose user-facing knobs are declared in one table.
public protocol KnobSettings: Sendable {
    /// The values a preset's missing field takes.
    init()
    static var knobs: [Knob<Self>] { get }
}

extension KnobSettings {
    /// Throws `BeautyError.invalidSettings("PREFIX.KEY: REASON")` for the first knob whose
    /// value is out of its range.
    public func checkKnobs(prefix: String) throws {
        try Self.check(Self.knobs, of: self, prefix: prefix)
    }

    static func check(_ knobs: [Knob<Self>], of settings: Self, prefix: String) throws {
        for knob in knobs {
            do throws(KnobError) {
                try knob.check(settings)
            } catch {
                throw BeautyError.invalidSettings("\(prefix.isEmpty ? "" : prefix + ".")\(knob.key): \(error.reason)")
            }
        }
    }
}
