import Foundation
import VelvetFiles

/// The files of an image sequence output (`frame%04d.png`), numbered from 1 as ffmpeg's
/// image2 muxer numbers them. Each frame is written under a temporary name (`OutputFile`)
/// and all are renamed into place only when the render finishes, so an interrupted or
/// failed render leaves none of them.
final class PictureSequenceOutput {
    let pattern: String
    private let policy: CommitPolicy
    /// The input, which no frame may replace.
    private let input: String?
    private(set) var frames: [OutputFile] = []
    static let firstNumber = 1

    init(pattern: String, policy: CommitPolicy, input: String?) throws {
        try OutputFile.checkDirectory(of: pattern)
        (self.pattern, self.policy, self.input) = (pattern, policy, input)
    }

    /// The next frame's file, not yet created.
    func next() throws -> OutputFile {
        let number = Self.firstNumber + frames.count
        guard let name = ImageSequence.name(pattern, number) else {
            throw MediaError.output(path: pattern, reason: "cannot name frame \(number) of the sequence")
        }
        if let input, SameFile.check(name, input) {
            throw MediaError.output(path: pattern, reason: "frame \(number), \(name), would overwrite the input")
        }
        let file = try OutputFile(path: name, policy: policy)
        frames.append(file)
        return file
    }

    /// Moves every frame into place, in order.
    func commit() throws {
        for frame in frames { try frame.commit() }
    }

    /// Removes every frame written so far.
    func discard() {
        for frame in frames { frame.discard() }
    }
}
