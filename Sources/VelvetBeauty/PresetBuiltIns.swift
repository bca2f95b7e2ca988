/// The five presets that ship with Velvet, from nothing to full glam. Values were tuned by
/// looking at the test photos (see Tests/VelvetBeautyTests/PresetTests.swift).
extension BeautyPreset {
    public static let builtInNames = ["none", "natural", "soft", "studio", "glam"]

    /// What a render uses when no preset is named and no default is set: `natural`.
    public static var shippedDefault: BeautyPreset { natural }
    public static let shippedDefaultName = "natural"

    /// The built-in preset called `name`, or nil.
    public static func builtIn(_ name: String) -> BeautyPreset? {
        switch name {
        case "none": return BeautyPreset.none
        case "natural": return natural
        case "soft": return soft
        case "studio": return studio
        case "glam": return glam
        default: return nil
        }
    }

    /// Light smoothing that keeps pores, a hint of lip colour and blush, barely any reshape;
    /// no teeth, eye, under-eye or shine retouch (restrained: the default).
    public static var natural: BeautyPreset {
        var preset = BeautyPreset()
        preset.skin.strength = 0.5
        preset.skin.spotRemoval = 0.5
        preset.reshape = ReshapeSettings(eyes: 0.15, slim: 0.15)
        preset.makeup.lipstick.strength = 0.3
        preset.makeup.blush.strength = 0.25
        preset.lut = LUT(source: .builtIn(.gentleBrighten), strength: 0.3, scope: .skin)
        return preset
    }

    /// Softer skin and a matte grade, pink lips in soft light.
    public static var soft: BeautyPreset {
        var preset = BeautyPreset()
        preset.skin.strength = 0.8
        preset.skin.detail = 0.8
        preset.skin.spotRemoval = 0.7
        preset.reshape = ReshapeSettings(eyes: 0.25, slim: 0.25)
        preset.makeup.lipstick = MakeupSettings.Lipstick(colour: RGBColour(hex: "#D96B7A")!, strength: 0.45,
                                                         blend: .softLight)
        preset.makeup.blush.strength = 0.35
        preset.lut = LUT(source: .builtIn(.softMatte), strength: 0.4, scope: .frame)
        return preset
    }

    /// Edge-preserving smoothing with a little sharpening and a brighter frame; the shine of
    /// studio lights taken down, a touch of eye, under-eye and teeth retouch.
    public static var studio: BeautyPreset {
        var preset = BeautyPreset()
        preset.skin.smoothing = .bilateral
        preset.skin.strength = 0.7
        preset.skin.spotRemoval = 0.8
        preset.skin.sharpen = 0.3
        preset.reshape = ReshapeSettings(eyes: 0.2, slim: 0.3)
        preset.makeup.lipstick.strength = 0.4
        preset.makeup.blush.strength = 0.3
        preset.lut = LUT(source: .builtIn(.gentleBrighten), strength: 0.5, scope: .frame)
        preset.teeth.strength = 0.3
        preset.eyeBrighten.strength = 0.3
        preset.underEye.strength = 0.4
        preset.shine.strength = 0.6
        return preset
    }

    /// Everything turned up: full smoothing, visible reshape, deep red lips, warm skin, whiter
    /// teeth, brighter eyes, no dark circles, a matte finish.
    public static var glam: BeautyPreset {
        var preset = BeautyPreset()
        preset.skin.strength = 1
        preset.skin.spotRemoval = 1
        preset.skin.sharpen = 0.2
        preset.reshape = ReshapeSettings(eyes: 0.5, slim: 0.5)
        preset.makeup.lipstick = MakeupSettings.Lipstick(colour: RGBColour(hex: "#9E1F33")!, strength: 0.75)
        preset.makeup.blush.strength = 0.55
        preset.lut = LUT(source: .builtIn(.warm), strength: 0.6, scope: .skin)
        preset.teeth.strength = 0.6
        preset.eyeBrighten.strength = 0.5
        preset.underEye.strength = 0.6
        preset.shine.strength = 0.5
        return preset
    }
}
