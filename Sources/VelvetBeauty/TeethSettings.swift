/// Teeth whitening (`TeethStage`): 0 turns it off. Kept free of GPU code so the preset
/// decoder (and its fuzz target) can use it alone.
public struct TeethSettings: KnobSettings, Equatable {
    /// 0...1: share of the way the teeth are lifted towards the sclera's lightness, and of
    /// their yellow (CIELAB b*) taken out.
    public var strength: Float

    public init() { strength = 0 }
    public init(strength: Float) { self.strength = strength }

    public static var knobs: [Knob<TeethSettings>] {
        [.number("strength", flag: "--teeth", \.strength, 0...1,
                 "teeth whitening inside the open mouth: lighter (never past the eyes' whites) and less yellow")]
    }

    public var isIdentity: Bool { strength == 0 }

    /// Throws `BeautyError.invalidSettings` naming the value out of range.
    public func validated() throws -> TeethSettings {
        try checkKnobs(prefix: "teeth")
        return self
    }
}
