import Foundation
import VelvetFiles

/// The files of an image sequence output (`frame%04d.png`), numbered from 1 as ffmpeg's
/// image2 muxer numbers them. Each frame is written under a temporary name (`OutputFile`)
/// and all are renamed into place only when the render finishes, so an interrupted or
/// failed render leaves none of them.
final class PictureSequenceOutput {
    let pattern: String
    private let policy: CommitPolicy
    /// What identifies the input's files (each file of a sequence input), which no frame may
    /// replace, through a link either.
    private let inputKeys: Set<String>
    private(set) var frames: [OutputFile] = []
    /// The sequence's claim: a partial of the pattern's own name, made before any frame, so
    /// that of two renders to one sequence started together one is refused (`PartialFiles.claim`
    /// looks for the other's), where each frame's claim does not look (their frames mixed).
    private let claim: OutputFile
    static let firstNumber = 1

    init(pattern: String, policy: CommitPolicy, input: String?) throws {
        guard ImageSequence.isUsable(pattern) else {
            throw MediaError.output(path: pattern, reason: ImageSequence.unusablePattern)
        }
        try OutputFile.checkDirectory(of: pattern)
        (self.pattern, self.policy) = (pattern, policy)
        let inputs = input.map { ImageSequence.isPattern($0) ? ImageSequence.files($0) : [$0] } ?? []
        inputKeys = Set(inputs.flatMap(SameFile.keys))
        claim = try OutputFile(path: pattern, policy: policy)
        _ = try claim.creating { _ in 0 }
    }

    /// The next frame's file, not yet created.
    func next() throws -> OutputFile {
        let number = Self.firstNumber + frames.count
        guard let name = ImageSequence.name(pattern, number) else {
            throw MediaError.output(path: pattern, reason: "cannot name frame \(number) of the sequence")
        }
        guard URL(fileURLWithPath: name).lastPathComponent.utf8.count <= Int(NAME_MAX) else {
            throw MediaError.output(path: name, reason: "the file name of frame \(number) is longer than \(NAME_MAX) bytes")
        }
        if !inputKeys.isDisjoint(with: SameFile.keys(name)) {
            throw MediaError.output(path: pattern, reason: "frame \(number), \(name), would overwrite the input")
        }
        let file = try OutputFile(path: name, policy: policy, isSequenceFrame: true)
        frames.append(file)
        return file
    }

    /// Moves every frame into place, in order; all or none: nothing is moved while a frame
    /// would meet a file it may not replace, and the frames moved are removed again if a
    /// later one fails.
    func commit() throws {
        if !policy.replacesExisting, let taken = frames.first(where: { FileManager.default.fileExists(atPath: $0.path) }) {
            throw OutputFileError.exists(path: taken.path)
        }
        var moved: [OutputFile] = []
        do {
            for frame in frames {
                try frame.commit()
                moved.append(frame)
            }
        } catch {
            for frame in moved { unlink(frame.path) }
            throw error
        }
        claim.discard()
    }

    /// Removes every frame written so far.
    func discard() {
        for frame in frames { frame.discard() }
        claim.discard()
    }
}
