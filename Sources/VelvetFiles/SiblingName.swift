/// Names of the hidden files Velvet keeps beside an output (`.NAME.velvet-partial-PID`,
/// `.NAME.velvet-done`). When NAME is so long that the sibling would pass NAME_MAX (255
/// bytes), NAME is cut and followed by a hash of the whole name, so the sibling can still be
/// created and different outputs still get different siblings.
public enum SiblingName {
    public static let maxBytes = 255

    /// `.NAME` + `suffix`, leaving `reserve` bytes free for what the caller appends (a PID).
    public static func hidden(_ name: String, suffix: String, reserve: Int = 0) -> String {
        let full = "." + name + suffix
        if full.utf8.count + reserve <= maxBytes { return full }
        let hash = "~" + FNV1a.hex(name)
        let room = maxBytes - reserve - suffix.utf8.count - hash.utf8.count - 1
        var cut = ""
        for character in name {
            if cut.utf8.count + character.utf8.count > room { break }
            cut.append(character)
        }
        return "." + cut + hash + suffix
    }
}
