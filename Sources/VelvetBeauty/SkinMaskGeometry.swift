import VelvetGPU
import VelvetFace

/// Packs every face's mask polygons for `beauty_skin_mask.comp` (layout documented there)
/// and says where each face reaches. Any number of faces: the kernel copies to shared
/// memory only the faces that reach its workgroup.
///
/// Buffer: a directory of `directoryStride` floats per face (block start, block length,
/// two spare, reach box x0 y0 x1 y1), then one block per face: a `headerStride`-float
/// header (centre, gradient radii, feathers, polygon count, face size, the farthest reach
/// beyond the oval, the face's weight), `polygonStride`
/// floats per polygon (vertex offset within the block, vertex count, role, zone
/// strength, bounding box), then the vertices. Holes come grown as the settings say.
struct SkinMaskGeometry {
    static let directoryStride = 8
    static let headerStride = 10
    static let polygonStride = 8

    enum Role: Float { case oval = 0, hole = 1, exclusion = 2, zone = 3 }

    /// One face as the skin stages see it.
    struct FaceReach {
        let face: BeautyFace
        /// Frame pixels the face's mask can touch (gradient disc and feathered oval), clamped.
        let region: PixelRegion
    }

    private(set) var floats: [Float] = []
    /// The faces in the order the kernel knows them (largest first).
    let faces: [FaceReach]
    /// Frame pixels any face can touch.
    let reach: PixelRegion
    /// Frame pixels inside some face's oval: the only place the spot permission is drawn (a
    /// mask pixel is permitted only when its centre is inside an oval).
    let ovals: PixelRegion

    init(faces input: [BeautyFace], settings: BeautySettings, frameWidth: Int, frameHeight: Int) {
        let mask = settings.mask
        let zones = settings.zones
        let sorted = input.sorted { $0.faceSize > $1.faceSize }
        var directory: [Float] = []
        var blocks: [Float] = []
        var reaches: [FaceReach] = []
        let blocksStart = sorted.count * Self.directoryStride
        for face in sorted {
            let size = face.faceSize
            let outer = mask.outerRadius * size
            let limit = BeautyFace.reachBeyondOval * face.interOcularDistance
            let low = pointwiseMax(pointwiseMin(face.centre - outer, face.ovalBounds.min - mask.feather * size),
                                   face.ovalBounds.min - limit)
            let high = pointwiseMin(pointwiseMax(face.centre + outer, face.ovalBounds.max + mask.feather * size),
                                    face.ovalBounds.max + limit)
            let entries: [(Role, Float, [SIMD2<Float>])] = [
                (.oval, 0, face.polygon(.faceOval)),
                (.hole, 0, face.polygon(.rightEye, grownBy: mask.eyeGrowth)),
                (.hole, 0, face.polygon(.leftEye, grownBy: mask.eyeGrowth)),
                (.hole, 0, face.polygon(.rightBrow, grownBy: mask.browGrowth)),
                (.hole, 0, face.polygon(.leftBrow, grownBy: mask.browGrowth)),
                (.hole, 0, face.polygon(.lipsOuter, grownBy: mask.lipGrowth)),
                (.hole, 0, face.polygon(.nostrils, grownBy: mask.noseGrowth)),
                (.exclusion, 0, face.polygon(.nose, grownBy: mask.noseGrowth)),
            ] + [
                (MeshRegion.forehead, zones.forehead), (.rightCheek, zones.cheeks), (.leftCheek, zones.cheeks),
                (.chin, zones.chin), (.rightUnderEye, zones.underEye), (.leftUnderEye, zones.underEye),
                (.nose, zones.nose), (.upperLip, zones.upperLip),
            ].map { (.zone, $0.1, face.polygon($0.0)) }

            var block: [Float] = [face.centre.x, face.centre.y, mask.innerRadius * size, outer, mask.feather * size,
                                  mask.zoneFeather * size, Float(entries.count), size, limit, face.weight]
            var vertexOffset = Self.headerStride + entries.count * Self.polygonStride
            var vertices: [Float] = []
            for (role, strength, points) in entries {
                let pointsLow = points.reduce(SIMD2<Float>(repeating: .infinity)) { pointwiseMin($0, $1) }
                let pointsHigh = points.reduce(SIMD2<Float>(repeating: -.infinity)) { pointwiseMax($0, $1) }
                block += [Float(vertexOffset), Float(points.count), role.rawValue, strength,
                          pointsLow.x, pointsLow.y, pointsHigh.x, pointsHigh.y]
                for point in points { vertices += [point.x, point.y] }
                vertexOffset += 2 * points.count
            }
            block += vertices
            directory += [Float(blocksStart + blocks.count), Float(block.count), 0, 0, low.x, low.y, high.x, high.y]
            blocks += block
            let region = Self.pixels(low: low, high: high, frameWidth: frameWidth, frameHeight: frameHeight)
            reaches.append(FaceReach(face: face, region: region))
        }
        floats = directory + blocks
        faces = reaches
        let regions = reaches.map(\.region).filter { !$0.isEmpty }
        reach = Self.union(regions)
        ovals = Self.union(sorted.map { Self.pixels(low: $0.ovalBounds.min, high: $0.ovalBounds.max,
                                                    frameWidth: frameWidth, frameHeight: frameHeight) }.filter { !$0.isEmpty })
    }

    private static func union(_ regions: [PixelRegion]) -> PixelRegion {
        regions.dropFirst().reduce(regions.first ?? PixelRegion(x: 0, y: 0, width: 0, height: 0)) { $0.union($1) }
    }

    var faceCount: Int { faces.count }
    var largestFaceSize: Float { faces.first?.face.faceSize ?? 0 }
    var smallestFaceSize: Float { faces.last?.face.faceSize ?? 0 }

    /// The frame pixels covering (low, high), one pixel of slack, clamped to the frame.
    private static func pixels(low: SIMD2<Float>, high: SIMD2<Float>, frameWidth: Int, frameHeight: Int) -> PixelRegion {
        let x0 = max(0, Int(low.x.rounded(.down)) - 1), y0 = max(0, Int(low.y.rounded(.down)) - 1)
        let x1 = min(frameWidth, Int(high.x.rounded(.up)) + 2), y1 = min(frameHeight, Int(high.y.rounded(.up)) + 2)
        return PixelRegion(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }
}

extension PixelRegion {
    /// The region grown by `margin` on every side, clamped to a frame.
    func grown(by margin: Int, width frameWidth: Int, height frameHeight: Int) -> PixelRegion {
        guard !isEmpty else { return self }
        let x0 = max(0, x - margin), y0 = max(0, y - margin)
        let x1 = min(frameWidth, x + width + margin), y1 = min(frameHeight, y + height + margin)
        return PixelRegion(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    /// Whether the two regions share a pixel.
    func intersects(_ other: PixelRegion) -> Bool {
        !isEmpty && !other.isEmpty && x < other.x + other.width && other.x < x + width
            && y < other.y + other.height && other.y < y + height
    }

    /// The pixels both regions hold (empty when they share none).
    func intersection(_ other: PixelRegion) -> PixelRegion {
        let left = max(x, other.x), top = max(y, other.y)
        let right = min(x + width, other.x + other.width), bottom = min(y + height, other.y + other.height)
        return PixelRegion(x: left, y: top, width: max(0, right - left), height: max(0, bottom - top))
    }
}
