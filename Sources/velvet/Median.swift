extension Array where Element == Double {
    /// The middle value, or the mean of the two middle ones for an even count (nan when empty).
    var median: Double {
        guard !isEmpty else { return .nan }
        let sorted = self.sorted(), middle = count / 2
        return count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
