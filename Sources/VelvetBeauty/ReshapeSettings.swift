/// The reshape knobs (eye enlargement, face slimming), each 0...1; 0 turns the effect off.
/// Kept free of GPU code so the preset decoder (and its fuzz target) can use it alone.
public struct ReshapeSettings: KnobSettings, Equatable {
    /// Eye enlargement: a radial magnifier about each eye centre.
    public var eyes: Float
    /// Face slimming / jaw narrowing: the jaw contour pulled toward the face centre.
    public var slim: Float

    public init() { (eyes, slim) = (0, 0) }
    public init(eyes: Float = 0, slim: Float = 0) { (self.eyes, self.slim) = (eyes, slim) }

    public static var knobs: [Knob<ReshapeSettings>] {
        [.number("eyes", flag: "--eyes", \.eyes, 0...1, "eye enlargement"),
         .number("slim", flag: "--slim", \.slim, 0...1, "face slimming: the jaw pulled toward the face centre")]
    }

    /// Both effects off: the stage copies its input.
    public static let off = ReshapeSettings()

    public var isIdentity: Bool { eyes == 0 && slim == 0 }

    /// Throws `BeautyError.invalidSettings` naming the first value out of range.
    public func validated() throws -> ReshapeSettings {
        try checkKnobs(prefix: "reshape")
        return self
    }
}
