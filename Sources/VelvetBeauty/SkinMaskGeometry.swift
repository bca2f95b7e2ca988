import VelvetGPU
import VelvetFace

/// Packs the faces' polygons for `beauty_skin_mask.comp` (layout documented there):
/// per face a 16-float header (centre, gradient radii, feathers, polygon table range,
/// bounding box), then 8 floats per polygon (vertex offset, vertex count, role, zone
/// strength, bounding box), then the vertices. Holes come grown as the settings say.
struct SkinMaskGeometry {
    static let maxFaces = 4
    static let maxFloats = 4096
    static let faceStride = 16
    static let polygonStride = 8

    enum Role: Float { case oval = 0, hole = 1, exclusion = 2, zone = 3 }

    private(set) var floats: [Float] = []
    /// Frame pixels any face can touch (gradient disc and face oval), clamped to the frame.
    private(set) var reach: PixelRegion

    /// Uses the `maxFaces` largest faces.
    init(faces: [BeautyFace], settings: BeautySettings, frameWidth: Int, frameHeight: Int) {
        let chosen = Array(faces.sorted { $0.faceSize > $1.faceSize }.prefix(Self.maxFaces))
        var headers = [Float](repeating: 0, count: chosen.count * Self.faceStride)
        var polygons: [Float] = []
        var vertices: [Float] = []
        var polygonEntries: [(face: Int, role: Role, strength: Float, points: [SIMD2<Float>])] = []
        var low = SIMD2<Float>(repeating: .infinity)
        var high = SIMD2<Float>(repeating: -.infinity)
        let mask = settings.mask
        let zones = settings.zones
        for (index, face) in chosen.enumerated() {
            let size = face.faceSize
            let outer = mask.outerRadius * size
            let faceLow = pointwiseMin(face.centre - outer, face.ovalBounds.min - mask.feather * size)
            let faceHigh = pointwiseMax(face.centre + outer, face.ovalBounds.max + mask.feather * size)
            low = pointwiseMin(low, faceLow)
            high = pointwiseMax(high, faceHigh)
            let header = index * Self.faceStride
            headers[header + 0] = face.centre.x
            headers[header + 1] = face.centre.y
            headers[header + 2] = mask.innerRadius * size
            headers[header + 3] = outer
            headers[header + 4] = mask.feather * size
            headers[header + 5] = mask.zoneFeather * size
            headers[header + 8] = faceLow.x
            headers[header + 9] = faceLow.y
            headers[header + 10] = faceHigh.x
            headers[header + 11] = faceHigh.y
            var entries: [(Role, Float, [SIMD2<Float>])] = [
                (.oval, 0, face.polygon(.faceOval)),
                (.hole, 0, face.polygon(.rightEye, grownBy: mask.eyeGrowth)),
                (.hole, 0, face.polygon(.leftEye, grownBy: mask.eyeGrowth)),
                (.hole, 0, face.polygon(.rightBrow, grownBy: mask.browGrowth)),
                (.hole, 0, face.polygon(.leftBrow, grownBy: mask.browGrowth)),
                (.hole, 0, face.polygon(.lipsOuter, grownBy: mask.lipGrowth)),
                (.hole, 0, face.polygon(.nostrils, grownBy: mask.noseGrowth)),
                (.exclusion, 0, face.polygon(.nose, grownBy: mask.noseGrowth)),
            ]
            let zoneRegions: [(MeshRegion, Float)] = [
                (.forehead, zones.forehead), (.rightCheek, zones.cheeks), (.leftCheek, zones.cheeks),
                (.chin, zones.chin), (.rightUnderEye, zones.underEye), (.leftUnderEye, zones.underEye),
                (.nose, zones.nose), (.upperLip, zones.upperLip),
            ]
            entries += zoneRegions.map { (.zone, $0.1, face.polygon($0.0)) }
            polygonEntries += entries.map { (index, $0.0, $0.1, $0.2) }
        }
        let tableStart = headers.count
        let vertexStart = tableStart + polygonEntries.count * Self.polygonStride
        var counts = [Int](repeating: 0, count: chosen.count)
        for entry in polygonEntries {
            if counts[entry.face] == 0 {
                headers[entry.face * Self.faceStride + 6] = Float(tableStart + polygons.count)
            }
            counts[entry.face] += 1
            let pointsLow = entry.points.reduce(SIMD2<Float>(repeating: .infinity)) { pointwiseMin($0, $1) }
            let pointsHigh = entry.points.reduce(SIMD2<Float>(repeating: -.infinity)) { pointwiseMax($0, $1) }
            polygons += [Float(vertexStart + vertices.count), Float(entry.points.count), entry.role.rawValue, entry.strength,
                         pointsLow.x, pointsLow.y, pointsHigh.x, pointsHigh.y]
            for point in entry.points { vertices += [point.x, point.y] }
        }
        for (face, count) in counts.enumerated() { headers[face * Self.faceStride + 7] = Float(count) }
        floats = headers + polygons + vertices
        precondition(floats.count <= Self.maxFloats, "mask geometry of \(floats.count) floats exceeds the kernel's table")
        if chosen.isEmpty {
            reach = PixelRegion(x: 0, y: 0, width: 0, height: 0)
        } else {
            let x0 = max(0, Int(low.x.rounded(.down)) - 1), y0 = max(0, Int(low.y.rounded(.down)) - 1)
            let x1 = min(frameWidth, Int(high.x.rounded(.up)) + 2), y1 = min(frameHeight, Int(high.y.rounded(.up)) + 2)
            reach = PixelRegion(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
        }
        faceCount = chosen.count
        largestFaceSize = chosen.first?.faceSize ?? 0
    }

    let faceCount: Int
    let largestFaceSize: Float
}

extension PixelRegion {
    /// The region grown by `margin` on every side, clamped to a frame.
    func grown(by margin: Int, width frameWidth: Int, height frameHeight: Int) -> PixelRegion {
        guard !isEmpty else { return self }
        let x0 = max(0, x - margin), y0 = max(0, y - margin)
        let x1 = min(frameWidth, x + width + margin), y1 = min(frameHeight, y + height + margin)
        return PixelRegion(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}
