/// Activations: an operator's fused one, or a standalone activation operator's.

extension NNPlanner {
    func fusedActivation(_ node: Int) throws -> NNActivation {
        switch graph.nodes[node].options.activation ?? .none {
        case .none: return .none
        case .relu: return .relu
        case .relu6: return .relu6
        case .reluN1To1: return .reluN1To1
        case .tanh: return .tanh
        case .signBit: throw NNError.unsupportedOperator("\(graph.label(node)) has fused activation SIGN_BIT")
        }
    }

    /// The activation a standalone activation operator applies, or nil for other operators.
    mutating func standaloneActivation(_ node: Int) throws -> NNActivation? {
        switch graph.nodes[node].builtin {
        case .relu?: return .relu
        case .relu6?: return .relu6
        case .reluN1To1?: return .reluN1To1
        case .tanh?: return .tanh
        case .logistic?: return .logistic
        case .hardSwish?: return .hardSwish
        case .prelu?:
            let channels = geometry(try runtimeInput(node, 0)).channels
            guard let (value, shape) = try constant(node, 1), let alpha = value.floats,
                  alpha.count == channels || alpha.count == 1 else {
                throw NNError.unsupportedOperator("\(graph.label(node)) needs a constant per-channel alpha (\(channels) values)")
            }
            _ = shape
            return .prelu(alphaOffset: appendChannelVector(alpha, channels: channels))
        default: return nil
        }
    }

    func isActivation(_ node: Int) -> Bool {
        switch graph.nodes[node].builtin {
        case .relu?, .relu6?, .reluN1To1?, .tanh?, .logistic?, .hardSwish?, .prelu?: return true
        default: return false
        }
    }
}
