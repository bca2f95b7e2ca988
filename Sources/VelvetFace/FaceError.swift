/// Why the face tracker cannot run. One line each, saying what to do.
public enum FaceError: Error, CustomStringConvertible, Equatable, Sendable {
    /// A model file is not where it was looked for.
    case missingModel(path: String)
    /// A model file does not have the inputs/outputs the tracker expects.
    case unexpectedModel(name: String, reason: String)
    /// Wrong use of the API with user-supplied values (sizes, options).
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .missingModel(let path):
            return "face model \(path) is missing: run Tools/fetch-models.sh, or point VELVET_MODELS_DIR (or analyze's --models) at the folder that has it"
        case .unexpectedModel(let name, let reason):
            return "face model \(name) is not the MediaPipe 0.10.21 model the tracker expects: \(reason)"
        case .invalidArgument(let message):
            return "invalid argument: \(message)"
        }
    }
}
