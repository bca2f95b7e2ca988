/// The reshape knobs (eye enlargement, face slimming), each 0...1; 0 turns the effect off.
/// Kept free of GPU code so the preset decoder (and its fuzz target) can use it alone.
public struct ReshapeSettings: Sendable, Equatable {
    /// Eye enlargement: a radial magnifier about each eye centre.
    public var eyes: Float
    /// Face slimming / jaw narrowing: the jaw contour pulled toward the face centre.
    public var slim: Float

    public init(eyes: Float = 0, slim: Float = 0) { (self.eyes, self.slim) = (eyes, slim) }

    /// Both effects off: the stage copies its input.
    public static let off = ReshapeSettings()

    public var isIdentity: Bool { eyes == 0 && slim == 0 }

    /// Throws `BeautyError.invalidSettings` naming the first value out of range.
    public func validated() throws -> ReshapeSettings {
        try checkRange("reshape.eyes", eyes, 0...1)
        try checkRange("reshape.slim", slim, 0...1)
        return self
    }
}

/// Throws `BeautyError.invalidSettings("NAME = VALUE, allowed LOW...HIGH")` unless `value` is
/// a finite number in `range`.
func checkRange(_ name: String, _ value: Float, _ range: ClosedRange<Float>) throws {
    guard value.isFinite, range.contains(value) else {
        throw BeautyError.invalidSettings("\(name) = \(value), allowed \(range.lowerBound)...\(range.upperBound)")
    }
}
