import Foundation

/// Where the `auto` detector looks for faces. MediaPipe's full-range model finds faces
/// down to about 5 % of its view's side (measured on a photo shrunk on a 1280x720 frame:
/// found at 62 px, missed at 47 px), short range down to about 8 %. So the whole frame,
/// letterboxed, is searched by both models, then in overlapping tiles at twice, four
/// times ... the scale, down to the level whose smallest findable face is
/// `minimumFaceSize`. Every level's tiles overlap by a quarter of their side, so a face up
/// to a quarter of a tile lies whole in one of them, and the next level takes over below
/// 1/8 of the tile: each face size is covered by some level. When nothing is found
/// upright, the frame is searched again turned by 90, 180 and 270 degrees; a still's face
/// found upright is looked at again turned around itself.
public struct DetectionPolicy: Sendable, Equatable {
    /// Faces whose box side is below this many pixels are not searched for by tiling.
    public var minimumFaceSize: Float = 24
    /// Most tiles searched in one frame: levels are dropped from the finest up to stay under it.
    public var maximumTiles = 64
    /// Tiles searched per detection pass in video (the rest in the passes after it, in
    /// turn), so a video frame's cost stays bounded.
    public var tilesPerVideoPass = 4
    /// Search the frame turned by quarter turns when no face is found upright.
    public var searchesRotations = true

    /// The smallest face the full-range model finds, as a share of its view's side.
    static let fullRangeReach: Float = 0.05
    /// A still's face found upright is looked at again turned, in a square this many times its
    /// landmark box's side: a face whose parts were read upright (an upside-down face's mouth
    /// and chin as a face) is at most about twice the reading, so it lies whole in the square.
    static let turnedCheckScale: Float = 4
    /// Tiles overlap by this share of their side.
    static let tileOverlap: Float = 0.25

    public init() {}

    /// The tiles of a `width` x `height` frame, coarsest level first.
    public func tiles(width: Int, height: Int) -> [DetectionView] {
        levels(width: width, height: height).flatMap { $0 }
    }

    /// Each level's tiles, coarsest first, as many levels as `maximumTiles` allows.
    func levels(width: Int, height: Int, quarterTurns: Int = 0) -> [[DetectionView]] {
        var levels: [[DetectionView]] = []
        var side = Float(max(width, height)) / 2
        var count = 0
        while Self.fullRangeReach * side * 2 > minimumFaceSize {
            let level = Self.tiles(side: side, width: width, height: height, quarterTurns: quarterTurns)
            guard count + level.count <= maximumTiles else { break }
            levels.append(level)
            count += level.count
            side /= 2
        }
        return levels
    }

    /// Squares of side `side` covering the frame with the overlap, the last of each row
    /// and column flush with the frame's edge.
    static func tiles(side: Float, width: Int, height: Int, quarterTurns: Int = 0) -> [DetectionView] {
        let stride = side * (1 - tileOverlap)
        func starts(_ length: Int) -> [Float] {
            let span = Float(length) - side
            guard span > 0 else { return [span / 2] }
            let count = Int((span / stride).rounded(.up)) + 1
            return (0..<count).map { span * Float($0) / Float(count - 1) }
        }
        return starts(height).flatMap { y in
            starts(width).map { x in
                DetectionView.tile(x: x, y: y, side: side, width: width, height: height, quarterTurns: quarterTurns)
            }
        }
    }

    /// One turned search: the frame turned by `turns` quarter turns clockwise, letterboxed
    /// whole (`level` nil, both models) or as the tiles of one level (full range).
    struct TurnedLevel: Hashable {
        var turns: Int
        var level: Int?
    }

    /// The turned searches for `turns`: the whole frame and the coarsest tile level, and with
    /// `coarsestOnly` false every finer level too.
    func turnedLevels(width: Int, height: Int, turns: [Int], coarsestOnly: Bool) -> [TurnedLevel] {
        let count = levels(width: width, height: height).count
        return turns.flatMap { turn in
            [TurnedLevel(turns: turn, level: nil)] + (0..<(coarsestOnly ? min(count, 1) : count)).map { TurnedLevel(turns: turn, level: $0) }
        }
    }

    /// The views of one turned search.
    func views(of search: TurnedLevel, width: Int, height: Int) -> [DetectionView] {
        guard let level = search.level else { return [.letterbox(width: width, height: height, quarterTurns: search.turns)] }
        return levels(width: width, height: height, quarterTurns: search.turns)[level]
    }
}
