/// Reading and editing the planned steps (for the passes that run after lowering).

extension NNPlanner {
    /// Drops the steps at `indices` (folded into others) and their positions.
    mutating func removeSteps(_ indices: Set<Int>) {
        let kept = steps.indices.filter { !indices.contains($0) }
        steps = kept.map { steps[$0] }
        positions = kept.map { positions[$0] }
    }

    /// The tensor whose memory `tensor` shares (itself unless it is a RESHAPE's output).
    func root(_ tensor: Int) -> Int {
        var t = tensor
        while let next = aliases[t] { t = next }
        return t
    }

    /// Whether step `index` is the only step reading `tensor` (directly or through an alias).
    func onlyStep(_ index: Int, reads tensor: Int) -> Bool {
        steps.enumerated().allSatisfy { $0.offset == index || !$0.element.reads.map(root).contains(tensor) }
    }
}
