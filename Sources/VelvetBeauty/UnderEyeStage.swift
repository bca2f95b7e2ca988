import VelvetFace
import VelvetGPU
import VelvetKernels

/// Where the under-eye retouch acts, rebuilt from every frame's mesh and packed for
/// `under_eye.comp` (layout documented there): one entry per open eye
/// (`TeethGeometry.openEyeRatio`), its tear trough (the mesh's under-eye loop, from below the
/// lower lid down to the top of the cheek), feathered inwards and kept `protectShare` IOD off
/// the eye's contour (lid margin and lashes), and the cheek reference band just below it
/// whose lightness the trough is lifted towards. All sizes are fractions of the IOD.
public struct UnderEyeGeometry: Sendable {
    public struct Eye: Sendable {
        public let contour: [SIMD2<Float>]
        public let trough: [SIMD2<Float>]
        public let cheek: [SIMD2<Float>]
        public let feather: Float
        public let protect: Float
        /// The low band's Gaussian sigma, in pixels.
        public let sigma: Float
        public let weight: Float
        /// What the eye's measurement belongs to (`MeasurementMemory`).
        public let key: MeasurementKey?

        /// Where the stage's coverage is full (inside the trough's loop by `feather`, at least
        /// `protect + feather` off the eye): the trough's core, whose level the stage and the metric measure.
        public func isCore(_ p: SIMD2<Float>) -> Bool {
            RegionMask.signedDistance(p, trough) <= -feather && RegionMask.signedDistance(p, contour) >= protect + feather
        }
    }

    public static let featherShare: Float = 0.03
    /// Nothing closer than this to the eye's contour changes: the lid margin and the lashes.
    public static let protectShare: Float = 0.03
    /// The low band's sigma: well above pores and fine lines (M6's 0.01 IOD), below the trough's height.
    public static let sigmaShare: Float = 0.04
    /// The cheek reference band, below the trough's bottom edge (mesh ring 111...120 / 340...349):
    /// from `cheekGapShare` to `cheekGapShare + cheekHeightShare` down the face.
    public static let cheekGapShare: Float = 0.02
    public static let cheekHeightShare: Float = 0.10
    /// The low band is measured on a grid of this many cells over each eye's box.
    public static let grid = (columns: 24, rows: 20)
    /// An eye is treated when its trough core and cheek band hold at least this many pixels
    /// each (`under_eye.comp`'s MIN_PIXELS): a smaller face is left as it is.
    public static let minimumPixels = 16
    static let statsHeader = 8
    static var statsPerEye: Int { statsHeader + grid.columns * grid.rows }
    static let blockHeader = 18
    static let cheekTops = ([111, 117, 118, 119, 120], [340, 346, 347, 348, 349])

    public let eyes: [Eye]

    public init(faces: [BeautyFace]) {
        eyes = faces.filter { $0.weight > 0 }.flatMap { face in
            let iod = face.interOcularDistance
            let across = face.landmarks[263] - face.landmarks[33]
            let down = SIMD2(-across.y, across.x) / max(TeethGeometry.distance(face.landmarks[263], face.landmarks[33]), 1e-6)
            let sides = zip([MeshRegion.rightEye, .leftEye], [MeshRegion.rightUnderEye, .leftUnderEye])
            return zip(zip(sides, TeethGeometry.eyeCorners), [Self.cheekTops.0, Self.cheekTops.1]).enumerated().compactMap { index, side -> Eye? in
                let (((eye, trough), corners), tops) = side
                let width = TeethGeometry.distance(face.landmarks[corners.0], face.landmarks[corners.1])
                let height = TeethGeometry.distance(face.landmarks[corners.2], face.landmarks[corners.3])
                guard height >= TeethGeometry.openEyeRatio * width else { return nil }
                let top = tops.map { face.landmarks[$0] + down * (Self.cheekGapShare * iod) }
                let cheek = top + top.reversed().map { $0 + down * (Self.cheekHeightShare * iod) }
                return Eye(contour: face.polygon(eye), trough: face.polygon(trough), cheek: cheek,
                           feather: max(2, Self.featherShare * iod), protect: max(2, Self.protectShare * iod),
                           sigma: max(2, Self.sigmaShare * iod), weight: face.weight, key: .of(face, part: index))
            }
        }
    }

    /// The frame pixels the retouch may change (inside the troughs), clamped to the frame;
    /// `withCheeks` adds the reference bands (the debug view draws them).
    public func region(width: Int, height: Int, withCheeks: Bool = false) -> PixelRegion {
        .covering(eyes.flatMap { eye in [TeethGeometry.bounds(eye.trough, grownBy: 1)] + (withCheeks ? [TeethGeometry.bounds(eye.cheek, grownBy: 1)] : []) },
                  width: width, height: height)
    }

    /// Floats for the kernel's geometry buffer: the `face_table.glsl` directory (one entry per
    /// eye, its box: trough and cheek band), then each eye's block (see `under_eye.comp`).
    public func packed(width: Int, height: Int) -> [Float] {
        var directory: [Float] = [], blocks: [Float] = []
        let blocksStart = eyes.count * 8
        for eye in eyes {
            let (low, high) = TeethGeometry.bounds(eye.trough + eye.cheek, grownBy: 1)
            let box = [max(low.x, 0), max(low.y, 0), min(high.x, Float(width)), min(high.y, Float(height))]
            // The grid reaches 2 sigma past the box, so the low band at the trough's edge has its support.
            let (gridLow, gridHigh) = TeethGeometry.bounds(eye.trough + eye.cheek, grownBy: 2 * eye.sigma)
            let cell = (gridHigh - gridLow) / SIMD2(Float(Self.grid.columns), Float(Self.grid.rows))
            var block = box + [eye.feather, eye.weight, eye.protect, eye.sigma, gridLow.x, gridLow.y, cell.x, cell.y]
            var next = Self.blockHeader
            for polygon in [eye.contour, eye.trough, eye.cheek] {
                block += [Float(next), Float(polygon.count)]
                next += 2 * polygon.count
            }
            for point in eye.contour + eye.trough + eye.cheek { block += [point.x, point.y] }
            directory += [Float(blocksStart + blocks.count), Float(block.count), 0, 0] + box
            blocks += block
        }
        return directory + blocks
    }
}

/// The under-eye retouch as a stage of the chain: below each open eye, the tear trough's
/// low band of L* (a Gaussian of `UnderEyeGeometry.sigmaShare` IOD over its skin, measured on
/// the GPU with the trough's and the cheek band's mean lightness, no readback) is lifted
/// towards the cheek's level (dark circles) and its relief around the core's own low level
/// reduced (the eye bag's shadow line); the fine band, L* minus that low band, is kept
/// (`under_eye.comp`). With no open eye the stage writes nothing. Its debug view draws the
/// weight in green and the cheek reference in blue.
public typealias UnderEyeStage = FeatureStage<UnderEyeGeometry>

extension UnderEyeGeometry: FeatureGeometry {
    public typealias Settings = UnderEyeSettings
    public typealias Push = KernelLibrary.UnderEyePush
    public static var sectionName: String { "under-eye" }
    public static var statsPerEntry: Int { statsPerEye }
    /// The measurement (low band, levels) reads the neighbourhood, but before the pass that
    /// writes: that pass reads only the pixel it writes and the measured grid, so in place.
    public static var isPointwise: Bool { true }
    public init(faces: [BeautyFace], width: Int, height: Int) { self.init(faces: faces) }
    public var entryCount: Int { eyes.count }
    public var entryKeys: [MeasurementKey?] { eyes.map(\.key) }
    public func region(width: Int, height: Int, showingMask: Bool) -> PixelRegion {
        region(width: width, height: height, withCheeks: showingMask)
    }
}
