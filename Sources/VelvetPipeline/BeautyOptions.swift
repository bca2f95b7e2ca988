import VelvetBeauty
import VelvetFace

/// Everything a render applies to the faces, in one value: the skin settings, the colour
/// grade, the tracker's options and an optional debug view.
public struct BeautyOptions: Sendable {
    /// What a debug render shows instead of the result.
    public enum DebugView: String, Sendable, CaseIterable {
        /// The final blend weight (skin mask x zones x strength) as grey.
        case mask
        /// The input with the tracked mesh and the person mask drawn.
        case landmarks
        /// The zone-intensity map as a colour ramp (blue 0, green 0.5, red 1) over the
        /// dimmed frame, where the skin mask reaches.
        case zones
        /// The spot fills in magenta over the frame.
        case spots
        /// Teeth whitening's weight in cyan over the open mouths.
        case teeth
        /// Eye brightening's iris weight in yellow, its sclera weight in magenta, over the open eyes.
        case eyes
        /// The under-eye retouch's weight in green over the tear troughs, its cheek reference in blue.
        case underEye = "under-eye"
        /// Shine control's region weight in blue, the highlights it finds in red, over forehead, nose and cheeks.
        case shine
    }

    /// A colour LUT and how it is applied.
    public struct Grade: Sendable {
        public var lut: ColorLUT
        /// 0 (identity) ... 1 (the full LUT).
        public var strength: Float
        /// Through the skin blend weight (whitening/warming the skin) or over the whole frame.
        public var throughSkinMask: Bool
        public init(lut: ColorLUT, strength: Float, throughSkinMask: Bool) {
            (self.lut, self.strength, self.throughSkinMask) = (lut, strength, throughSkinMask)
        }
    }

    public var skin: BeautySettings = .standard
    public var grade: Grade?
    public var makeup: MakeupSettings = .off
    public var reshape: ReshapeSettings = .off
    public var teeth = TeethSettings()
    public var eyeBrighten = EyeBrightenSettings()
    public var underEye = UnderEyeSettings()
    public var shine = ShineSettings()
    public var detector: DetectorChoice = .auto
    public var maxFaces = FaceTrackerOptions().maxFaces
    /// Which tracked faces the stages treat (the rest keep their pixels).
    public var faces = FaceSelection.all
    /// Video: frames the tracker runs ahead of the skin stages, for the zero-phase landmark
    /// smoothing and gap filling (`LookAheadTracker`); 0: the causal tracker, frame by frame.
    public var lookAhead = LookAheadTracker.standardFrames
    public var debugView: DebugView?
    /// Measure each face's achieved M5, M6 and M8 on the output, every frame (`BeautyEffect.skinQuality`).
    public var measuresQuality = false
    /// The settings of every face but the largest, from the preset's `others` section (`FacePasses`);
    /// nil: every face gets these. Only their per-face settings are used.
    public var others: BeautyOptions? {
        get { othersBox.first }
        set { othersBox = newValue.map { [$0] } ?? [] }
    }
    private var othersBox: [BeautyOptions] = [] // an array: a struct cannot hold itself directly

    public init() {}

    /// The skin stage and the sharpen after it with `skin`, every other stage off.
    public static func skinOnly(_ skin: BeautySettings) throws -> BeautyOptions {
        var options = BeautyOptions()
        options.skin = try skin.validated()
        return options
    }

    /// The options a preset describes. `loadLUT` reads a LUT file the preset names.
    public init(preset: BeautyPreset, loadLUT: (String) throws -> ColorLUT) throws {
        skin = preset.skinSettings()
        makeup = preset.makeup
        reshape = preset.reshape
        teeth = preset.teeth
        eyeBrighten = preset.eyeBrighten
        underEye = preset.underEye
        shine = preset.shine
        let table: ColorLUT?
        switch preset.lut.source {
        case .none: table = nil
        case .builtIn(let builtIn): table = builtIn.lut
        case .file(let path): table = try loadLUT(path)
        }
        if let table, preset.lut.strength > 0 {
            grade = Grade(lut: table, strength: preset.lut.strength, throughSkinMask: preset.lut.scope == .skin)
        }
        if let theirs = preset.othersPreset { others = try BeautyOptions(preset: theirs, loadLUT: loadLUT) }
    }
}
