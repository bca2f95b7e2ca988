import VelvetBeauty
import VelvetFace
import VelvetGPU
import VelvetMedia

/// The quality metrics of one face in a still, as `QualityMetrics` defines them (nil: the
/// metric's region was empty, so it could not be computed).
public struct FaceQuality: Sendable {
    public var trackID: Int
    public var box: FaceBox
    public var interOcularDistance: Float
    public var m4FeatureSSIM: Double?
    public var m5MidBandRatio: Double?
    public var m6FineBandRatio: Double?
    public var m7Halo: Double?
    public var m8ColourShift: Double?
}

/// What the probe measured on one still.
public struct StillQuality: Sendable {
    public var path: String
    public var width: Int
    public var height: Int
    /// M3: the largest change outside every face oval grown by 1 IOD (nil without such pixels).
    public var m3Background: Int?
    public var faces: [FaceQuality]
}

/// Runs a still through the product's own path (decode to the working image, the beauty
/// effect with its tracker and skin stages) and measures every face it found, so the
/// figures are those of what a user gets with the same options.
public final class StillQualityProbe {
    public let context: GPUContext
    private let effect: BeautyEffect

    public init(context: GPUContext, options: BeautyOptions) throws {
        self.context = context
        effect = try BeautyEffect(context: context, options: options)
    }

    public func measure(path: String) throws -> StillQuality {
        let input = try ImageLoader.load(path, context: context)
        let output = try GPUImage(context: context, width: input.width, height: input.height, format: input.format)
        let recorder = try CommandRecorder(context: context)
        let change = try effect.record(EffectFrame(index: 0, time: 0, isStillImage: true, input: input, output: output),
                                       on: recorder)
        if change == .none { try recorder.copy(input, to: output) }
        let inputReadback = try recorder.download(input)
        let outputReadback = try recorder.download(output)
        let tracked = effect.lastTracking
        let maskReadback = try tracked?.personMask.map { ($0, try recorder.download($0)) }
        try recorder.submit().wait()
        try effect.completed(frame: 0)

        let width = input.width, height = input.height
        let before = Self.bytes(fromHalfRGBA: inputReadback.bytes), after = Self.bytes(fromHalfRGBA: outputReadback.bytes)
        let inputImage = try RGBImage(rgba8: before, width: width, height: height)
        let outputImage = try RGBImage(rgba8: after, width: width, height: height)
        let person = maskReadback.map { mask, readback in PlaneImage(downloaded: readback, width: mask.width, height: mask.height) }
        let faces = try (tracked?.faces ?? []).map { face in (face, try BeautyFace(landmarks: face.points)) }
        let measured = faces.map { face, geometry in
            FaceQuality(trackID: face.trackID, box: face.box, interOcularDistance: geometry.interOcularDistance,
                        m4FeatureSSIM: QualityMetrics.featureSSIM(input: inputImage, output: outputImage, face: geometry),
                        m5MidBandRatio: QualityMetrics.midBandRatio(input: inputImage, output: outputImage, face: geometry),
                        m6FineBandRatio: QualityMetrics.fineBandRatio(input: inputImage, output: outputImage, face: geometry),
                        m7Halo: person.flatMap { QualityMetrics.halo(input: inputImage, output: outputImage, face: geometry,
                                                                     personMask: $0)?.value },
                        m8ColourShift: QualityMetrics.colourShift(input: inputImage, output: outputImage, face: geometry))
        }
        let background = QualityMetrics.backgroundDifference(input: before, output: after, width: width, height: height,
                                                             faces: faces.map(\.1))
        return StillQuality(path: path, width: width, height: height, m3Background: background, faces: measured)
    }

    /// rgba16f texels (R'G'B' 0...1) to RGBA8, rounded as the encoders' conversion rounds.
    static func bytes(fromHalfRGBA bytes: [UInt8]) -> [UInt8] {
        halves(bytes).map { UInt8(min(max(($0 * 255).rounded(), 0), 255)) }
    }

    static func halves(_ bytes: [UInt8]) -> [Float] {
        stride(from: 0, to: bytes.count, by: 2).map { Float(Float16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)) }
    }
}
