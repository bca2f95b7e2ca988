import VelvetFace
import VelvetGPU
import VelvetKernels

/// The open eyes eye brightening works in, rebuilt from every frame's mesh and packed for
/// `eye_brighten.comp` (layout documented there): one entry per open eye
/// (`TeethGeometry.openEyes`), its contour, the inset its effect ramps in over and the iris
/// radius derived from the contour (`irisShare` of the eye's width).
public struct EyeBrightenGeometry: Sendable {
    public struct Eye: Sendable {
        public let contour: [SIMD2<Float>]
        /// Pixels inside the contour over which the effect ramps from 0 to full.
        public let inset: Float
        public let irisRadius: Float
        public let weight: Float
        /// What the eye's measurement belongs to (`MeasurementMemory`).
        public let key: MeasurementKey?
    }

    /// The ramp inside the contour, a fraction of the inter-ocular distance: the lid margin
    /// and the lashes lie on and outside the contour.
    public static let insetShare: Float = 0.035
    /// Iris radius over the eye's width (corner to corner): an iris is about 11.7 mm across an
    /// eye opening of about 28 mm.
    public static let irisShare: Float = 0.21
    static let blockHeader = 10

    public let eyes: [Eye]

    public init(faces: [BeautyFace]) {
        eyes = faces.filter { $0.weight > 0 }.flatMap { face in
            TeethGeometry.openEyeSides(of: face).map { side, contour in
                let corners = (contour[0], contour[8]) // 33 / 133 and 263 / 362
                return Eye(contour: contour, inset: max(1, Self.insetShare * face.interOcularDistance),
                           irisRadius: Self.irisShare * TeethGeometry.distance(corners.0, corners.1), weight: face.weight,
                           key: .of(face, part: side))
            }
        }
    }

    /// The frame pixels brightening may change (inside the open eyes), clamped to the frame.
    public func region(width: Int, height: Int) -> PixelRegion {
        .covering(eyes.map { TeethGeometry.bounds($0.contour, grownBy: 1) }, width: width, height: height)
    }

    /// Floats for the kernel's geometry buffer: the `face_table.glsl` directory (one entry
    /// per eye, its box: the contour's), then each eye's block (see `eye_brighten.comp`).
    public func packed(width: Int, height: Int) -> [Float] {
        var directory: [Float] = [], blocks: [Float] = []
        let blocksStart = eyes.count * 8
        for eye in eyes {
            let (low, high) = TeethGeometry.bounds(eye.contour, grownBy: 1)
            let box = [max(low.x, 0), max(low.y, 0), min(high.x, Float(width)), min(high.y, Float(height))]
            var block = box + [eye.inset, eye.weight, eye.irisRadius, Float(Self.blockHeader), Float(eye.contour.count), 0]
            for point in eye.contour { block += [point.x, point.y] }
            directory += [Float(blocksStart + blocks.count), Float(block.count), 0, 0] + box
            blocks += block
        }
        return directory + blocks
    }
}

/// Eye brightening as a stage of the chain: inside each open eye's contour only, the sclera
/// lightened and de-reddened and the iris's contrast lifted, from the eye's own measured
/// lightness and iris position (a GPU measurement, no readback; `eye_brighten.comp`). With
/// no open eye the stage writes nothing.
public typealias EyeBrightenStage = FeatureStage<EyeBrightenGeometry>

extension EyeBrightenGeometry: FeatureGeometry {
    public typealias Settings = EyeBrightenSettings
    public typealias Push = KernelLibrary.EyeBrightenPush
    public static var sectionName: String { "eyes" }
    public static var statsPerEntry: Int { 8 }
    /// The iris centre (x, y in frame pixels).
    public static var positionStats: Range<Int> { 3..<5 }
    /// The iris's contrast lift reads its neighbours: not in place.
    public static var isPointwise: Bool { false }
    public init(faces: [BeautyFace], width: Int, height: Int) { self.init(faces: faces) }
    public var entryCount: Int { eyes.count }
    public var entryKeys: [MeasurementKey?] { eyes.map(\.key) }
    public func region(width: Int, height: Int, showingMask: Bool) -> PixelRegion { region(width: width, height: height) }
}
