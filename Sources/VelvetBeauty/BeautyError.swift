/// Errors a caller can act on: a face, image or setting the pipeline cannot use.
public enum BeautyError: Error, CustomStringConvertible, Equatable {
    case invalidFace(String)
    case invalidSettings(String)
    case invalidImage(String)

    public var description: String {
        switch self {
        case .invalidFace(let detail): return "face geometry rejected: \(detail)"
        case .invalidSettings(let detail): return "beauty setting out of range: \(detail)"
        case .invalidImage(let detail): return "image rejected: \(detail)"
        }
    }
}
