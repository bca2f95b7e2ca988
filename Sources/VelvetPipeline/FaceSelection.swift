import VelvetFace

/// Which tracked faces the beauty stages treat (`--faces all|largest|N[,M...]`): all, the
/// largest, or the tracks `velvet analyze` reports by these IDs. The others keep their pixels.
public enum FaceSelection: Sendable, Equatable, CustomStringConvertible {
    case all
    /// The largest face (inter-ocular distance) when it is first seen; it stays chosen while
    /// it is tracked, so a video does not hop between two faces of about the same size.
    case largest
    case tracks(Set<Int>)

    /// Parses `all`, `largest` or a comma-separated list of positive track IDs.
    public init?(_ text: String) {
        switch text {
        case "all": self = .all
        case "largest": self = .largest
        default:
            let ids = text.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
            guard !ids.isEmpty, ids.allSatisfy({ ($0 ?? 0) > 0 }) else { return nil }
            self = .tracks(Set(ids.compactMap { $0 }))
        }
    }

    public var description: String {
        switch self {
        case .all: return "all"
        case .largest: return "largest"
        case .tracks(let ids): return ids.sorted().map(String.init).joined(separator: ",")
        }
    }
}

/// Applies a `FaceSelection` frame after frame (remembering the largest face's track).
struct FaceSelector {
    let selection: FaceSelection
    private var largestTrack: Int?
    /// Every track seen.
    private var seenTracks: Set<Int> = []

    init(_ selection: FaceSelection) { self.selection = selection }

    /// Track IDs asked for that selected no face in the whole render, where faces were
    /// tracked: what they ask for was not done, which must not pass for a render that did its
    /// work (a typo, `1,29` for `1,2`, treats fewer faces than asked).
    var unmatchedWarning: String? {
        guard case .tracks(let ids) = selection, !seenTracks.isEmpty else { return nil }
        let missing = ids.subtracting(seenTracks)
        guard !missing.isEmpty else { return nil }
        let treated = ids.count > missing.count ? "so only \(FaceSelection.tracks(ids.intersection(seenTracks))) was treated"
            : "so no face was treated"
        return "--faces \(selection): no face had track \(FaceSelection.tracks(missing)) (the render's were "
            + "\(seenTracks.sorted().map(String.init).joined(separator: ", "))), \(treated) (velvet analyze lists the tracks)"
    }

    mutating func select(_ faces: [Face]) -> [Face] {
        switch selection {
        case .all:
            return faces
        case .tracks(let ids):
            seenTracks.formUnion(faces.map(\.trackID))
            return faces.filter { ids.contains($0.trackID) }
        case .largest:
            if let largestTrack, let face = faces.first(where: { $0.trackID == largestTrack }) { return [face] }
            guard let face = faces.max(by: { $0.interOcularDistance < $1.interOcularDistance }) else {
                largestTrack = nil
                return []
            }
            largestTrack = face.trackID
            return [face]
        }
    }
}
