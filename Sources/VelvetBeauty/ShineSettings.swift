/// Shine control (`ShineStage`): 0 turns it off. Kept free of GPU code so the preset
/// decoder (and its fuzz target) can use it alone.
public struct ShineSettings: KnobSettings, Equatable {
    /// 0...1: how much of the highlights' excess over the skin's own level is taken out.
    public var strength: Float

    public init() { strength = 0 }
    public init(strength: Float) { self.strength = strength }

    public static var knobs: [Knob<ShineSettings>] {
        [.number("strength", flag: "--shine", \.strength, 0...1,
                 "shine control on forehead, nose and cheeks: highlights pulled towards the skin's own level, texture kept")]
    }

    public var isIdentity: Bool { strength == 0 }

    /// Throws `BeautyError.invalidSettings` naming the value out of range.
    public func validated() throws -> ShineSettings {
        try checkKnobs(prefix: "shine")
        return self
    }
}
