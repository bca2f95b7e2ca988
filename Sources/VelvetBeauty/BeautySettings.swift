/// Every knob of the skin pipeline, with its range and default. Face-relative lengths are
/// fractions of the face size (`BeautyFace.faceSize`); luma values are on 0...1 (BT.709 Y').
/// `validated()` throws for anything out of range, so a user-supplied value never traps.
public struct BeautySettings: Sendable, Equatable {
    public enum Smoothing: String, Sendable, CaseIterable {
        /// Edge-preserving bilateral filter on the skin (flattens pores and blotches alike).
        case bilateral
        /// Smooth only the low-frequency layer, keep the fine texture (pores).
        case frequencySeparation = "freqsep"
    }

    public enum BilateralImplementation: String, Sendable, CaseIterable {
        /// Bilateral grid: cost independent of the radius. The default.
        case grid
        /// Brute force over the whole window: the quality reference, cost grows with radius^2.
        case exact
    }

    /// Per-zone smoothing intensity, 0...1 each, multiplied into the mask.
    public struct ZoneStrengths: KnobSettings, Equatable {
        public var forehead: Float = 1
        public var cheeks: Float = 1
        public var chin: Float = 0.8
        public var underEye: Float = 0.6
        public var nose: Float = 0.5
        public var upperLip: Float = 0.5
        /// Skin outside every zone polygon (temples, jaw sides, neck).
        public var elsewhere: Float = 1
        public init() {}

        public static var knobs: [Knob<ZoneStrengths>] {
            [.number("forehead", \.forehead, 0...1, "forehead"), .number("cheeks", \.cheeks, 0...1, "cheeks"),
             .number("chin", \.chin, 0...1, "chin"), .number("underEye", \.underEye, 0...1, "under the eyes"),
             .number("nose", \.nose, 0...1, "nose"), .number("upperLip", \.upperLip, 0...1, "upper lip"),
             .number("elsewhere", \.elsewhere, 0...1, "skin outside every zone (temples, jaw sides, neck)")]
        }
    }

    /// Shape of the skin mask.
    public struct MaskShape: Sendable, Equatable {
        /// Radial gradient: full weight inside innerRadius, none beyond outerRadius (face sizes).
        public var innerRadius: Float = 0.32   // 0...1, < outerRadius
        public var outerRadius: Float = 0.55   // 0...1.5
        /// Gaussian sigma of the person-mask blur for a 430-px face (the seed post's 12, for
        /// its selfie in a 1080p frame); each face's is scaled by its size / 430.
        public var personBlurSigma: Float = 12 // 0...64
        /// The blurred person probability is remapped by smoothstep(low, high, p): its soft
        /// ramp then lies inside the person, so background next to the face gets no weight.
        public var personLow: Float = 0.5     // 0...1, < personHigh
        public var personHigh: Float = 0.85   // 0...1
        /// Feature holes, grown about their centroid by these fractions.
        public var eyeGrowth: Float = 0.5      // 0...2 each
        public var browGrowth: Float = 0.3
        public var lipGrowth: Float = 0.2
        public var noseGrowth: Float = 0.2
        /// Feathering (face sizes): holes are solid up to their grown outline and fade out
        /// over 2 x feather beyond it; the face oval fades over +-feather across its outline.
        public var feather: Float = 0.035     // 0.001...0.2
        /// Half-width of the transitions between zones (face sizes).
        public var zoneFeather: Float = 0.05  // 0.001...0.3
        public init() {}
    }

    /// Which smoothing runs.
    public var smoothing: Smoothing = .frequencySeparation
    /// Smoothing strength, 0...1: the share of each face's blotch amplitude (the mid band of
    /// quality metric M5) removed, from none at 0 to `1 - sqrt(strongestMidBand)` at 1; the
    /// blend gain that gets there is measured per face (`StrengthFit`).
    public var strength: Float = 1
    /// The mid-band energy share (M5) strength 1 leaves, 0.01...1.
    public var strongestMidBand: Float = 0.1
    /// Bilateral implementation (bilateral smoothing only).
    public var bilateral: BilateralImplementation = .grid
    /// Bilateral radius as a fraction of the face size (0.005...0.3); spatial sigma = radius / 3.
    public var maxRadius: Float = 0.1
    /// Bilateral range sigma on luma (0.01...0.5).
    public var rangeSigma: Float = 0.3
    /// Frequency separation: sigma of the small Gaussian that splits low from high (0.001...0.05 face sizes).
    public var baseSigma: Float = 0.008
    /// Frequency separation: sigma of the mask-aware low-pass that smooths the low layer (0.005...0.3 face sizes).
    public var lowPassSigma: Float = 0.035
    /// Frequency separation: gain of the high layer (pores, grain), 0...2; 1 keeps it all.
    public var detail: Float = 1
    /// Frequency separation: luma difference between smoothed and original low layer at which
    /// the change fades out (keeps shadow edges), 0.01...1.
    public var guardRange: Float = 0.25
    /// Both methods: the half-width (face sizes, 0...0.5; 0 turns it off) of the patches of
    /// skin whose mean the smoothing may not change, so the skin keeps its tone (`ToneKeeping`).
    public var toneRadius: Float = 0.06
    /// Both methods: share of the smoothing's colour change applied (its luma change always
    /// is), 0...1; below 1 the skin keeps its regional colour while its tone evens out.
    public var chromaSmoothing: Float = 0.15
    /// Spot removal strength, 0...1 (0 turns it off).
    public var spotRemoval: Float = 0.7
    /// Spot scales: blob radii as fractions of the face size (about 3 px and 10 px for a
    /// 430 px face in a 1080p frame), 0.001...0.1.
    public var spotFineRadius: Float = 0.007
    public var spotCoarseRadius: Float = 0.023
    /// Luma contrast (ring minus blob) where a spot starts to count, 0.005...0.5.
    public var spotThreshold: Float = 0.06
    /// Contrast above which a dark mark is treated as a feature and kept, 0.01...1.
    public var spotContrastCap: Float = 0.3
    /// Largest luma lift a fill may apply, 0...1.
    public var spotMaxLift: Float = 0.2
    /// A spot counts only while its ring's mean absolute luma deviation stays below this
    /// share of its contrast (an uneven ring means an edge, a wrinkle or a feature), 0.05...2.
    public var spotRingSpread: Float = 0.5
    /// Most spots filled per face, 0...1000; when more are found, the darkest against their
    /// surroundings are kept (a cap so that a freckled or textured face is not repainted).
    public var spotMaxCount: Int = 40
    /// Per-zone intensities.
    public var zones = ZoneStrengths()
    /// Mask shape.
    public var mask = MaskShape()
    /// Global unsharp amount after the composite, 0...2 (0: off, the default).
    public var sharpen: Float = 0

    public init() {}

    /// The defaults.
    public static let standard = BeautySettings()

    /// How far (face sizes) the smoothing reads around a pixel: the bilateral radius, or
    /// two sigmas of frequency separation's low-pass.
    public var smoothingReach: Float { smoothing == .bilateral ? maxRadius : 2 * lowPassSigma }

    /// The mid-band energy share (M5) `strength` aims to leave on every face: the
    /// blotches' amplitude falls linearly from 1 at strength 0 to sqrt(strongestMidBand) at 1.
    public var midBandTarget: Float {
        let amplitude = 1 - strength * (1 - strongestMidBand.squareRoot())
        return amplitude * amplitude
    }

    /// Every effect off: the output equals the input.
    public static var off: BeautySettings {
        var settings = BeautySettings()
        settings.strength = 0
        settings.spotRemoval = 0
        settings.sharpen = 0
        return settings
    }

    /// Throws `BeautyError.invalidSettings` naming the first value out of range.
    public func validated() throws -> BeautySettings {
        try BeautyPreset.Skin(self).checkKnobs(prefix: "")
        try zones.checkKnobs(prefix: "zones")
        try Self.check(Self.knobs, of: self, prefix: "")
        guard (0...1000).contains(spotMaxCount) else {
            throw BeautyError.invalidSettings("spotMaxCount: \(spotMaxCount) is out of range 0...1000")
        }
        guard mask.innerRadius < mask.outerRadius else {
            throw BeautyError.invalidSettings("mask.innerRadius (\(mask.innerRadius)) must be below mask.outerRadius (\(mask.outerRadius))")
        }
        guard mask.personLow < mask.personHigh else {
            throw BeautyError.invalidSettings("mask.personLow (\(mask.personLow)) must be below mask.personHigh (\(mask.personHigh))")
        }
        return self
    }
}

/// The engine's own knobs (not in presets or on the command line), checked by `validated()`;
/// the user-facing ones are `BeautyPreset.Skin`'s and `ZoneStrengths`' tables.
extension BeautySettings: KnobSettings {
    public static var knobs: [Knob<BeautySettings>] {
        [.number("strongestMidBand", \.strongestMidBand, 0.01...1, "the M5 strength 1 leaves"),
         .number("maxRadius", \.maxRadius, 0.005...0.3, "bilateral radius, face sizes"),
         .number("rangeSigma", \.rangeSigma, 0.01...0.5, "bilateral range sigma on luma"),
         .number("baseSigma", \.baseSigma, 0.001...0.05, "frequency separation split sigma, face sizes"),
         .number("lowPassSigma", \.lowPassSigma, 0.005...0.3, "frequency separation low-pass sigma, face sizes"),
         .number("guardRange", \.guardRange, 0.01...1, "luma change at which frequency separation fades out"),
         .number("toneRadius", \.toneRadius, 0...0.5, "half-width of the tone-keeping patches, face sizes"),
         .number("chromaSmoothing", \.chromaSmoothing, 0...1, "share of the smoothing's colour change applied"),
         .number("spotFineRadius", \.spotFineRadius, 0.001...0.1, "fine spot scale, face sizes"),
         .number("spotCoarseRadius", \.spotCoarseRadius, 0.001...0.1, "coarse spot scale, face sizes"),
         .number("spotThreshold", \.spotThreshold, 0.005...0.5, "luma contrast where a spot counts"),
         .number("spotContrastCap", \.spotContrastCap, 0.01...1, "contrast above which a mark is a feature"),
         .number("spotMaxLift", \.spotMaxLift, 0...1, "largest luma lift of a fill"),
         .number("spotRingSpread", \.spotRingSpread, 0.05...2, "ring unevenness that rules a spot out"),
         .number("mask.innerRadius", \.mask.innerRadius, 0...1, "radial gradient: full weight inside"),
         .number("mask.outerRadius", \.mask.outerRadius, 0...1.5, "radial gradient: no weight beyond"),
         .number("mask.personBlurSigma", \.mask.personBlurSigma, 0...64, "person-mask blur for a 430-px face"),
         .number("mask.personLow", \.mask.personLow, 0...1, "person remap low edge"),
         .number("mask.personHigh", \.mask.personHigh, 0...1, "person remap high edge"),
         .number("mask.eyeGrowth", \.mask.eyeGrowth, 0...2, "eye hole growth"),
         .number("mask.browGrowth", \.mask.browGrowth, 0...2, "brow hole growth"),
         .number("mask.lipGrowth", \.mask.lipGrowth, 0...2, "lip hole growth"),
         .number("mask.noseGrowth", \.mask.noseGrowth, 0...2, "nostril hole growth"),
         .number("mask.feather", \.mask.feather, 0.001...0.2, "hole and oval feather, face sizes"),
         .number("mask.zoneFeather", \.mask.zoneFeather, 0.001...0.3, "zone transition half-width, face sizes")]
    }
}
