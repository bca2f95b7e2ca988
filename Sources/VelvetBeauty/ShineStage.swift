import VelvetFace
import VelvetGPU
import VelvetKernels

/// Where shine control may act, rebuilt from every frame's mesh and packed for
/// `shine_control.comp` (layout documented there): per face its forehead, nose and cheek
/// polygons (one entry each, each with a grid of cells its low band is measured on),
/// feathered, with the skin mask's holes (eyes, brows, lips, nostrils, grown and feathered
/// as its defaults are) cut out.
public struct ShineGeometry: Sendable {
    public struct Region: Sendable {
        public let polygon: [SIMD2<Float>]
        /// The feature holes' grown outlines (the same for every region of a face).
        public let holes: [[SIMD2<Float>]]
        public let feather: Float
        /// Holes are solid up to their outline and fade out over 2 x this beyond it.
        public let holeFeather: Float
        public let weight: Float
        /// The frame box the region can touch (its polygon grown by the feather), which its
        /// grid of `columns` x `rows` cells of `cell` px covers.
        public let low: SIMD2<Float>, high: SIMD2<Float>
        public let cell: Float
        public let columns: Int, rows: Int
        /// What the region's measurement belongs to (`MeasurementMemory`): its face's track,
        /// which region, and its grid's size (a grid of another size starts afresh).
        public let key: MeasurementKey?
    }

    /// The regions' feather, a fraction of the inter-ocular distance (shine fades in, no edge).
    public static let featherShare: Float = 0.05
    /// The low band's cell, a fraction of the IOD: a highlight (0.05-0.2 IOD) spans several
    /// cells, a pore (under 0.01 IOD) lies inside one, so the correction follows the highlight
    /// and leaves the texture.
    public static let cellShare: Float = 0.03
    /// Cells per region at most (`GRID_CELLS` in the kernel: 9 per lane of its workgroup).
    public static let maxCells = 2304
    static let regions: [MeshRegion] = [.forehead, .nose, .rightCheek, .leftCheek]
    static let blockHeader = 14
    static let holeStride = 6

    public let regions: [Region]

    public init(faces: [BeautyFace], width: Int, height: Int) {
        let mask = BeautySettings.MaskShape()
        let size = SIMD2(Float(width), Float(height))
        regions = faces.filter { $0.weight > 0 }.flatMap { face -> [Region] in
            let iod = face.interOcularDistance
            let feather = max(1, Self.featherShare * iod)
            // The nostrils as they are: grown like the skin mask's hole, the band would cover the
            // nose tip, where a nose's highlight sits.
            let holes = [face.polygon(.rightEye, grownBy: mask.eyeGrowth), face.polygon(.leftEye, grownBy: mask.eyeGrowth),
                         face.polygon(.rightBrow, grownBy: mask.browGrowth), face.polygon(.leftBrow, grownBy: mask.browGrowth),
                         face.polygon(.lipsOuter, grownBy: mask.lipGrowth), face.polygon(.nostrils)]
            return Self.regions.enumerated().compactMap { part, name in
                let polygon = face.polygon(name)
                let (rawLow, rawHigh) = TeethGeometry.bounds(polygon, grownBy: feather + 1)
                let low = pointwiseMax(rawLow, .zero), high = pointwiseMin(rawHigh, size)
                guard high.x > low.x, high.y > low.y else { return nil }
                var cell = max(2, Self.cellShare * iod)
                func count(_ length: Float) -> Int { max(1, Int((length / cell).rounded(.up))) }
                while count(high.x - low.x) * count(high.y - low.y) > Self.maxCells { cell *= 1.1 }
                return Region(polygon: polygon, holes: holes, feather: feather, holeFeather: mask.feather * face.faceSize,
                              weight: face.weight, low: low, high: high, cell: cell,
                              columns: count(high.x - low.x), rows: count(high.y - low.y),
                              key: .of(face, part: part, layout: count(high.x - low.x) << 16 | count(high.y - low.y)))
            }
        }
    }

    /// The region weight at p (CPU reference of the kernel's, before the strength), largest
    /// over the regions.
    public func weight(at p: SIMD2<Float>) -> Float {
        regions.map { region in
            let d = RegionMask.signedDistance(p, region.polygon)
            guard d < region.feather else { return 0 }
            let hole = region.holes.map { RegionMask.signedDistance(p, $0) }.min() ?? .infinity
            return (1 - smoothstep(-region.feather, region.feather, d)) * smoothstep(0, 2 * region.holeFeather, hole) * region.weight
        }.max() ?? 0
    }

    /// The frame pixels shine control may change (the regions, feathered); empty when there
    /// are none.
    public func region(width: Int, height: Int) -> PixelRegion {
        .covering(regions.map { ($0.low, $0.high) }, width: width, height: height)
    }

    /// Floats for the kernel's geometry buffer: the `face_table.glsl` directory (one entry
    /// per region, its box), then each region's block (see `shine_control.comp`).
    func packed() -> [Float] {
        var directory: [Float] = [], blocks: [Float] = []
        let blocksStart = regions.count * 8
        for region in regions {
            let box = [region.low.x, region.low.y, region.high.x, region.high.y]
            var block = box + [region.feather, region.holeFeather, region.weight, region.cell, Float(region.columns), Float(region.rows)]
            var next = Self.blockHeader + Self.holeStride * region.holes.count
            block += [Float(next), Float(region.polygon.count), Float(region.holes.count), 0]
            next += 2 * region.polygon.count
            for hole in region.holes {
                let (low, high) = TeethGeometry.bounds(hole, grownBy: 0)
                block += [Float(next), Float(hole.count), low.x, low.y, high.x, high.y]
                next += 2 * hole.count
            }
            for point in region.polygon + region.holes.flatMap({ $0 }) { block += [point.x, point.y] }
            directory += [Float(blocksStart + blocks.count), Float(block.count), 0, 0] + box
            blocks += block
        }
        return directory + blocks
    }
}

/// Shine control as a stage of the chain: per face, in its forehead, nose and cheek regions,
/// the low band's luminance peaks above the region's own skin level (measured on the GPU from
/// its pixels, no readback) are pulled towards it and the chroma the highlight washed out
/// returns, while the fine band (texture) is kept (`shine_control.comp`). Skin no brighter
/// than its level and its diffuse spread is copied as it is; with no face the stage writes
/// nothing.
public typealias ShineStage = FeatureStage<ShineGeometry>

extension ShineGeometry: FeatureGeometry {
    public typealias Settings = ShineSettings
    public typealias Push = KernelLibrary.ShineControlPush
    public static var sectionName: String { "shine" }
    /// Header floats of each region's statistics before its two grids, L* and C* (the kernel's STATS_HEADER).
    static let statsHeader = 8
    public static var statsPerEntry: Int { statsHeader + 2 * maxCells }
    /// The measurement reads the regions before the pass that writes; that pass reads only the
    /// pixel it writes (its low band comes from the measured grid), so it can work in place.
    public static var isPointwise: Bool { true }
    public var entryCount: Int { regions.count }
    public var entryKeys: [MeasurementKey?] { regions.map(\.key) }
    public func region(width: Int, height: Int, showingMask: Bool) -> PixelRegion { region(width: width, height: height) }
    public func packed(width: Int, height: Int) -> [Float] { packed() }
}

private func smoothstep(_ edge0: Float, _ edge1: Float, _ x: Float) -> Float {
    let t = min(max((x - edge0) / (edge1 - edge0), 0), 1)
    return t * t * (3 - 2 * t)
}
