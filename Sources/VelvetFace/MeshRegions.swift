/// Named regions of MediaPipe's 468-point face mesh, each an ordered closed loop of mesh
/// indices (a polygon once the points are placed).
///
/// Eyes, brows, lips, the face oval and the lower-nose outline follow the contours of the
/// canonical topology as MediaPipe publishes them (`face_mesh_connections.py`), walked in
/// order. Nose, nostrils, cheeks, under-eye, forehead, chin and upper lip are our own
/// loops over the same topology, checked by drawing them on the test photos. "Left" and
/// "right" are the subject's, as in MediaPipe: the right eye (33...133) is on the image's
/// left in a frontal photo. Every loop's mirror partner uses the mirrored indices.
public enum MeshRegion: String, CaseIterable, Sendable {
    case faceOval
    case rightEye, leftEye
    case rightBrow, leftBrow
    case lipsOuter, lipsInner
    /// The whole nose: bridge from between the eyes, sides along the nose-cheek fold, the alae.
    case nose
    /// The tip outline of MediaPipe's nose contour: alae, columella base, tip.
    case noseLower
    /// One band over both nostrils and the columella under the tip.
    case nostrils
    case rightCheek, leftCheek
    case rightUnderEye, leftUnderEye
    case forehead
    case chin
    case upperLip

    /// The smallest face oval, in pixels a side, the beauty stages take (a smaller one has no
    /// skin to speak of; a track file holding one is refused when read).
    public static let minimumOvalSide: Float = 4

    /// The bounding box (min, max) of the face oval of `points` (the mesh, frame pixels).
    public static func ovalBounds(_ points: [SIMD2<Float>]) -> (min: SIMD2<Float>, max: SIMD2<Float>) {
        let oval = MeshRegion.faceOval.indices.map { points[$0] }
        return (oval.reduce(SIMD2<Float>(repeating: .infinity)) { pointwiseMin($0, $1) },
                oval.reduce(SIMD2<Float>(repeating: -.infinity)) { pointwiseMax($0, $1) })
    }

    /// Whether the face oval of `points` spans `minimumOvalSide` both ways.
    public static func ovalIsLargeEnough(_ points: [SIMD2<Float>]) -> Bool {
        let (low, high) = ovalBounds(points)
        return high.x - low.x >= minimumOvalSide && high.y - low.y >= minimumOvalSide
    }

    /// The loop of mesh indices, in order around the region.
    public var indices: [Int] {
        switch self {
        case .faceOval:
            return [10, 338, 297, 332, 284, 251, 389, 356, 454, 323, 361, 288, 397, 365, 379, 378, 400, 377,
                    152, 148, 176, 149, 150, 136, 172, 58, 132, 93, 234, 127, 162, 21, 54, 103, 67, 109]
        case .rightEye: return [33, 7, 163, 144, 145, 153, 154, 155, 133, 173, 157, 158, 159, 160, 161, 246]
        case .leftEye: return [263, 249, 390, 373, 374, 380, 381, 382, 362, 398, 384, 385, 386, 387, 388, 466]
        case .rightBrow: return [70, 63, 105, 66, 107, 55, 65, 52, 53, 46]
        case .leftBrow: return [300, 293, 334, 296, 336, 285, 295, 282, 283, 276]
        case .lipsOuter:
            return [61, 146, 91, 181, 84, 17, 314, 405, 321, 375, 291, 409, 270, 269, 267, 0, 37, 39, 40, 185]
        case .lipsInner:
            return [78, 95, 88, 178, 87, 14, 317, 402, 318, 324, 308, 415, 310, 311, 312, 13, 82, 81, 80, 191]
        case .nose:
            return [168, 122, 196, 174, 217, 198, 209, 49, 129, 64, 98, 97, 2, 326, 327, 294, 358, 279, 429, 420,
                    437, 399, 419, 351]
        case .noseLower: return [98, 97, 2, 326, 327, 294, 278, 344, 440, 275, 4, 45, 220, 115, 48, 64]
        case .nostrils: return [98, 64, 219, 218, 237, 44, 1, 274, 457, 438, 439, 294, 327, 326, 2, 97]
        case .rightCheek: return [116, 117, 118, 119, 100, 142, 203, 206, 216, 192, 213, 147, 123]
        case .leftCheek: return [345, 346, 347, 348, 329, 371, 423, 426, 436, 416, 433, 376, 352]
        case .rightUnderEye:
            return [130, 25, 110, 24, 23, 22, 26, 112, 243, 244, 128, 121, 120, 119, 118, 117, 111, 35]
        case .leftUnderEye:
            return [359, 255, 339, 254, 253, 252, 256, 341, 463, 464, 357, 350, 349, 348, 347, 346, 340, 265]
        case .forehead:
            return [21, 54, 103, 67, 109, 10, 338, 297, 332, 284, 251, 300, 293, 334, 296, 336, 9, 107, 66, 105,
                    63, 70]
        case .chin:
            return [43, 106, 182, 83, 18, 313, 406, 335, 273, 422, 430, 394, 379, 378, 400, 377, 152, 148, 176, 149,
                    150, 169, 210, 202]
        case .upperLip:
            return [98, 97, 2, 326, 327, 391, 322, 410, 287, 409, 270, 269, 267, 0, 37, 39, 40, 185, 57, 186, 92, 165]
        }
    }

    /// Number of points in the mesh these indices refer to.
    public static let meshPointCount = 468

    /// Outer eye corners; their distance is the inter-ocular distance (IOD) the metrics use.
    public static let outerEyeCorners = (right: 33, left: 263)

    /// Centres of the metric discs: right cheek, left cheek, forehead.
    public static let cheekCentres = (right: 50, left: 280)
    public static let foreheadCentre = 151
}
