/// Eye brightening (`EyeBrightenStage`): 0 turns it off. Kept free of GPU code so the
/// preset decoder (and its fuzz target) can use it alone.
public struct EyeBrightenSettings: KnobSettings, Equatable {
    /// 0...1: how far the sclera is lightened and de-reddened, and the iris's contrast lifted.
    public var strength: Float

    public init() { strength = 0 }
    public init(strength: Float) { self.strength = strength }

    public static var knobs: [Knob<EyeBrightenSettings>] {
        [.number("strength", flag: "--eye-brighten", \.strength, 0...1,
                 "inside the open eyes only: whites lighter and less red, iris contrast lifted (lashes and lids untouched)")]
    }

    public var isIdentity: Bool { strength == 0 }

    /// Throws `BeautyError.invalidSettings` naming the value out of range.
    public func validated() throws -> EyeBrightenSettings {
        try checkKnobs(prefix: "eyeBrighten")
        return self
    }
}
