/// Why a model cannot be planned or run on the GPU. One line each, naming the
/// operator or tensor at fault.
public enum NNError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The graph uses an operator (or an operator variant) Velvet has no kernel for.
    case unsupportedOperator(String)
    /// The graph is inconsistent (shapes that do not follow from the op, missing constants).
    case invalidGraph(String)
    /// Wrong use of the API with user-supplied values (sizes, indices).
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .unsupportedOperator(let message): return "unsupported operator: \(message)"
        case .invalidGraph(let message): return "invalid model graph: \(message)"
        case .invalidArgument(let message): return "invalid argument: \(message)"
        }
    }
}
