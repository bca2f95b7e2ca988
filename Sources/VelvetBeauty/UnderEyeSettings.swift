/// Under-eye retouch (`UnderEyeStage`): 0 turns it off. Kept free of GPU code so the preset
/// decoder (and its fuzz target) can use it alone.
public struct UnderEyeSettings: KnobSettings, Equatable {
    /// 0...1: how far the tear trough's low band is lifted towards the cheek's level (dark
    /// circles) and its shading relief flattened (eye bags); the fine band (texture) is kept.
    public var strength: Float

    public init() { strength = 0 }
    public init(strength: Float) { self.strength = strength }

    public static var knobs: [Knob<UnderEyeSettings>] {
        [.number("strength", flag: "--under-eye", \.strength, 0...1,
                 "dark circles lifted towards the cheek's level and eye-bag shading softened below the open eyes (texture kept)")]
    }

    public var isIdentity: Bool { strength == 0 }

    /// Throws `BeautyError.invalidSettings` naming the value out of range.
    public func validated() throws -> UnderEyeSettings {
        try checkKnobs(prefix: "underEye")
        return self
    }
}
