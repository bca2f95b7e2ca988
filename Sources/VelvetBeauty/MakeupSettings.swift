/// Lipstick and blush. Colours are working-space R'G'B' (gamma-encoded, 0...1), written as
/// "#RRGGBB" in presets (8 bits per channel). Kept free of GPU code so the preset decoder can use it alone.
public struct MakeupSettings: Sendable, Equatable {
    /// How the lipstick colour combines with the lips underneath.
    public enum LipBlend: String, Sendable, CaseIterable, Codable {
        /// The lipstick's colour with the lips' shading: luma = lip luma x lipstick luma / 0.45
        /// (typical lip luma), so highlights, creases and texture stay (the default).
        case natural
        /// base x colour: darker, every shade kept in proportion.
        case multiply
        /// Soft light (W3C formula): a gentle tint that keeps contrast.
        case softLight = "soft-light"
    }

    public struct Lipstick: KnobSettings, Equatable {
        public var colour: RGBColour
        /// 0...1: share of the blended colour applied at the lips' centre.
        public var strength: Float
        public var blend: LipBlend
        /// Edge feather, as a fraction of the inter-ocular distance (0.002...0.1).
        public var feather: Float

        public static let standardColour = RGBColour(hex: "#B84A54")!
        public init() { self.init(colour: Self.standardColour) }
        public init(colour: RGBColour = standardColour, strength: Float = 0, blend: LipBlend = .natural, feather: Float = 0.012) {
            (self.colour, self.strength, self.blend, self.feather) = (colour, strength, blend, feather)
        }

        public static var knobs: [Knob<Lipstick>] {
            [.colour("colour", flag: "--lipstick-colour", \.colour, "lipstick colour (quote it: # starts a shell comment)"),
             .number("strength", flag: "--lipstick", \.strength, 0...1, "lipstick strength"),
             .choice("blend", flag: "--lipstick-blend", \.blend, "how the colour combines with the lips"),
             .number("feather", \.feather, 0.002...0.1, "edge feather, fraction of the inter-ocular distance")]
        }
    }

    public struct Blush: KnobSettings, Equatable {
        public var colour: RGBColour
        /// 0...1: at 1 the patch centre is mixed 50 % toward the blush colour (at the skin's own luma); it falls off to 0 at the patch edge.
        public var strength: Float
        /// Patch size (semi-major axis) as a fraction of the face size (0.03...0.3).
        public var size: Float

        public static let standardColour = RGBColour(hex: "#ED7378")!
        public init() { self.init(colour: Self.standardColour) }
        public init(colour: RGBColour = standardColour, strength: Float = 0, size: Float = 0.13) {
            (self.colour, self.strength, self.size) = (colour, strength, size)
        }

        public static var knobs: [Knob<Blush>] {
            [.colour("colour", flag: "--blush-colour", \.colour, "blush colour (quoted)"),
             .number("strength", flag: "--blush", \.strength, 0...1, "blush strength"),
             .number("size", \.size, 0.03...0.3, "patch size, fraction of the face size")]
        }
    }

    public var lipstick: Lipstick
    public var blush: Blush

    public init(lipstick: Lipstick = Lipstick(), blush: Blush = Blush()) { (self.lipstick, self.blush) = (lipstick, blush) }

    /// Both off: the stage copies its input.
    public static let off = MakeupSettings()

    public var isIdentity: Bool { lipstick.strength == 0 && blush.strength == 0 }

    /// Throws `BeautyError.invalidSettings` naming the first value out of range.
    public func validated() throws -> MakeupSettings {
        try lipstick.checkKnobs(prefix: "lipstick")
        try blush.checkKnobs(prefix: "blush")
        return self
    }
}

/// An R'G'B' colour, each channel 0...1. Codable as the string "#RRGGBB".
public struct RGBColour: Sendable, Equatable, Codable, CustomStringConvertible {
    public var red: Float, green: Float, blue: Float

    public init(red: Float, green: Float, blue: Float) { (self.red, self.green, self.blue) = (red, green, blue) }

    /// Parses "#RRGGBB" (case-insensitive); nil for anything else.
    public init?(hex: String) {
        let digits = hex.hasPrefix("#") ? hex.dropFirst() : Substring("")
        guard digits.count == 6, digits.allSatisfy(\.isHexDigit), let value = UInt32(digits, radix: 16) else { return nil }
        self.init(red: Float((value >> 16) & 0xFF) / 255, green: Float((value >> 8) & 0xFF) / 255, blue: Float(value & 0xFF) / 255)
    }

    /// "#RRGGBB", channels rounded to 8 bits.
    public var hex: String {
        func byte(_ value: Float) -> String {
            let clamped = Int((min(max(value, 0), 1) * 255).rounded())
            let text = String(clamped, radix: 16, uppercase: true)
            return text.count == 1 ? "0" + text : text
        }
        return "#" + byte(red) + byte(green) + byte(blue)
    }

    public var description: String { hex }

    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let colour = RGBColour(hex: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "'\(text)' is not a colour; write \"#RRGGBB\""))
        }
        self = colour
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}
