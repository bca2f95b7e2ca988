/// Offline, zero-phase landmark smoothing over a window of frames (`velvet render` and
/// `analyze` on video files, `--look-ahead K`): a frame's faces are final once the raw
/// tracker results of the K frames after it are known.
///
/// Per track, each landmark coordinate is fitted by a local quadratic in time (weighted
/// least squares, tricube weights over the frames within K on either side: Savitzky-Golay
/// with a smooth kernel). A symmetric fit has no lag, and a quadratic follows motion that
/// speeds up or turns (a head shake) where an average would cut its peaks, while the mesh's
/// frame-to-frame noise is averaged over up to 2K+1 frames. The samples are:
/// - only the frames the mesh saw the face in, of one shot (a cut starts new tracks, and no
///   frame of another shot is read, so nothing blends across it);
/// - a run of identical landmarks (a repeated picture) once, at its first frame, and every
///   later frame of the run gets the first's result: a repeat renders as the frame it repeats.
/// A frame in which the tracker held a lost face (`Face.missedFrames` > 0; `LookAheadTracker`
/// holds one K frames) that it sees again within K frames is a gap: the fit there interpolates between the sightings, at full
/// weight, so no frame loses the effect. A held face not seen again within K frames is
/// leaving: it stays at its last smoothed landmarks, fading as the tracker fades it.
public struct TrackWindow: Sendable {
    /// Frames looked ahead; the fit also reads as many frames back.
    public let lookAhead: Int
    /// Frames added, and frames handed out by `next`.
    public private(set) var added = 0
    public private(set) var emitted = 0

    private struct Entry {
        var faces: [Face]
        var shot: Int
    }
    /// The frames from `first` on (K + 1 back from the next to emit, for the repeat test).
    private var entries: [Entry] = []
    private var first = 0
    /// What each track got in the last frame emitted: its raw landmarks and its result.
    private var lastEmitted: [Int: (raw: [SIMD3<Float>], seen: Bool, face: Face)] = [:]

    public init(lookAhead: Int) {
        precondition(lookAhead >= 0)
        self.lookAhead = lookAhead
    }

    /// Adds the raw tracker result of the next frame; `isCut`: it starts a new shot.
    public mutating func add(_ faces: [Face], isCut: Bool) {
        let shot = (entries.last?.shot ?? 0) + (isCut ? 1 : 0)
        entries.append(Entry(faces: faces, shot: shot))
        added += 1
    }

    /// Whether the next frame can be emitted: K frames after it are in, or `atEnd`.
    public func isReady(atEnd: Bool = false) -> Bool {
        emitted < added && (atEnd || added - emitted > lookAhead)
    }

    /// The next frame's smoothed faces (call when `isReady`; at the end of the input, with
    /// fewer than K frames after it, the fit reads those there are).
    public mutating func next() -> [Face] {
        precondition(emitted < added, "no frame to emit")
        let index = emitted
        let faces = entry(index)!.faces.map { smoothed($0, at: index) }
        lastEmitted = Dictionary(zip(entry(index)!.faces, faces).map { raw, result in
            (raw.trackID, (raw: raw.landmarks, seen: raw.missedFrames == 0, face: result))
        }, uniquingKeysWith: { first, _ in first })
        emitted += 1
        // Keep K + 1 frames back from the next one to emit.
        let keepFrom = max(0, emitted - lookAhead - 1)
        if keepFrom > first {
            entries.removeFirst(keepFrom - first)
            first = keepFrom
        }
        return faces
    }

    /// Smooths every frame of a whole list (a track file's), as a render would.
    public static func smoothing(_ frames: [(faces: [Face], isCut: Bool)], lookAhead: Int) -> [[Face]] {
        var window = TrackWindow(lookAhead: lookAhead)
        for frame in frames { window.add(frame.faces, isCut: frame.isCut) }
        return frames.indices.map { _ in window.next() }
    }

    private func entry(_ index: Int) -> Entry? {
        index >= first && index - first < entries.count ? entries[index - first] : nil
    }

    private func seen(_ track: Int, at index: Int) -> Face? {
        entry(index)?.faces.first { $0.trackID == track && $0.missedFrames == 0 }
    }

    private func smoothed(_ face: Face, at index: Int) -> Face {
        let shot = entry(index)!.shot
        let last = min(added - 1, index + lookAhead), earliest = max(first, index - lookAhead)
        if face.missedFrames == 0 {
            // A repeat of the last frame's face keeps its result.
            if let previous = lastEmitted[face.trackID], previous.seen, previous.raw == face.landmarks,
               entry(index - 1)?.shot == shot {
                return previous.face
            }
        } else {
            let returns = index < last && (index + 1...last).contains { entry($0)?.shot == shot && seen(face.trackID, at: $0) != nil }
            guard returns else {
                // Leaving (or not seen again soon): held where it was last shown, fading.
                var held = lastEmitted[face.trackID]?.face ?? face
                (held.score, held.missedFrames, held.weight) = (face.score, face.missedFrames, face.weight)
                return held
            }
        }
        // The samples: seen frames of this shot, a run of identical landmarks once.
        var samples: [(offset: Float, landmarks: [SIMD3<Float>])] = []
        for at in earliest...last where entry(at)?.shot == shot {
            guard let sample = seen(face.trackID, at: at) else { continue }
            if entry(at - 1)?.shot == shot, let before = seen(face.trackID, at: at - 1), before.landmarks == sample.landmarks {
                continue
            }
            samples.append((Float(at - index), sample.landmarks))
        }
        guard !samples.isEmpty else { return face }
        func fit(halfWidth: Int) -> [SIMD3<Float>] {
            let near = samples.filter { abs($0.offset) <= Float(halfWidth) }
            guard !near.isEmpty else { return face.landmarks }
            let coefficients = Self.fitCoefficients(offsets: near.map(\.offset), halfWidth: Float(halfWidth + 1))
            var points = [SIMD3<Float>](repeating: .zero, count: face.landmarks.count)
            for (coefficient, sample) in zip(coefficients, near) where sample.landmarks.count == points.count {
                for p in points.indices { points[p] += coefficient * sample.landmarks[p] }
            }
            return points
        }
        // The wide fit, unless it strays from the narrow one by more than the narrow one's
        // noise explains: then motion the quadratic cannot follow over the whole window (a
        // quick shake) is under way, and the result moves smoothly over to the narrow fit.
        let wide = fit(halfWidth: lookAhead)
        var points = wide
        if lookAhead > Self.narrowFrames {
            // In a gap the narrow fit reaches the nearest sighting on each side, so that it too
            // interpolates instead of holding the last one.
            let nearestBefore = samples.last { $0.offset < 0 }.map { Int(-$0.offset) } ?? 0
            let nearestAfter = samples.first { $0.offset > 0 }.map { Int($0.offset) } ?? 0
            let reach = face.missedFrames == 0 ? Self.narrowFrames : max(Self.narrowFrames, nearestBefore, nearestAfter)
            let narrow = fit(halfWidth: min(reach, lookAhead))
            let iod = max(planarDistance(narrow[33], narrow[263]), 1)
            let apart = zip(wide, narrow).map { planarDistance($0, $1) }.reduce(0, +) / Float(max(wide.count, 1)) / iod
            let share = min(max((apart - Self.agreement.lowerBound) / (Self.agreement.upperBound - Self.agreement.lowerBound), 0), 1)
            if share > 0 { points = zip(wide, narrow).map { $0 + share * ($1 - $0) } }
        }
        return Face(landmarks: points, score: face.score, trackID: face.trackID, missedFrames: face.missedFrames,
                    weight: face.missedFrames == 0 ? face.weight : 1)
    }

    /// The narrow fit's half width, in frames.
    static let narrowFrames = 2
    /// Mean distance (over IOD) between the wide and the narrow fit: below the lower bound the
    /// wide one is kept (the narrow fit's own noise is about 0.1 % IOD on a still face), above
    /// the upper the narrow one.
    static let agreement: ClosedRange<Float> = 0.003...0.006

    /// The weights c_j with Σ c_j y_j the value at offset 0 of the weighted least-squares
    /// polynomial through (offset_j, y_j): quadratic from 5 samples on, a line from 2, with tricube weights
    /// (1 - (|offset| / halfWidth)^3)^3.
    static func fitCoefficients(offsets: [Float], halfWidth: Float) -> [Float] {
        let weights = offsets.map { offset -> Double in
            let u = min(abs(Double(offset)) / Double(halfWidth), 1)
            let w = 1 - u * u * u
            return w * w * w
        }
        var degree = offsets.count >= 5 ? 2 : min(1, offsets.count - 1)
        while degree > 0 {
            // Moments of the weighted design: M[a][b] = Σ w t^(a+b), solved for row 0 of M⁻¹.
            var moments = [Double](repeating: 0, count: 2 * degree + 1)
            for (offset, weight) in zip(offsets, weights) {
                var power = 1.0
                for k in moments.indices { moments[k] += weight * power; power *= Double(offset) }
            }
            let size = degree + 1
            var matrix = (0..<size).map { a in (0..<size).map { b in moments[a + b] } }
            var unit = [Double](repeating: 0, count: size)
            unit[0] = 1
            if let solution = solve(&matrix, unit) {
                // c_j = w_j Σ_a x_a t_j^a, with M x = e0.
                return zip(offsets, weights).map { offset, weight in
                    var power = 1.0, sum = 0.0
                    for x in solution { sum += x * power; power *= Double(offset) }
                    return Float(weight * sum)
                }
            }
            degree -= 1 // too few distinct offsets for this degree
        }
        let total = weights.reduce(0, +)
        return weights.map { Float(total > 0 ? $0 / total : 1 / Double(weights.count)) }
    }

    /// Gaussian elimination with partial pivoting; nil when singular.
    private static func solve(_ matrix: inout [[Double]], _ right: [Double]) -> [Double]? {
        let size = right.count
        var b = right
        for column in 0..<size {
            guard let pivot = (column..<size).max(by: { abs(matrix[$0][column]) < abs(matrix[$1][column]) }),
                  abs(matrix[pivot][column]) > 1e-9 * max(1, abs(matrix[0][0])) else { return nil }
            matrix.swapAt(column, pivot)
            b.swapAt(column, pivot)
            for row in (column + 1)..<size {
                let factor = matrix[row][column] / matrix[column][column]
                for k in column..<size { matrix[row][k] -= factor * matrix[column][k] }
                b[row] -= factor * b[column]
            }
        }
        var x = [Double](repeating: 0, count: size)
        for row in (0..<size).reversed() {
            var sum = b[row]
            for k in (row + 1)..<size { sum -= matrix[row][k] * x[k] }
            x[row] = sum / matrix[row][row]
        }
        return x
    }
}

private func planarDistance(_ a: SIMD3<Float>, _ b: SIMD3<Float>) -> Float {
    let d = a - b
    return (d.x * d.x + d.y * d.y).squareRoot()
}
