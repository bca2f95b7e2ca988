import CFFmpeg
import Foundation

/// An image sequence named as ffmpeg names one: a file name holding a printf-style frame
/// number (`frame%04d.png`, `%d.tif`), read by FFmpeg's image2 demuxer as a video at 25
/// frames a second (its default, as `ffmpeg -i`). A file that exists under the very name is
/// that file, not a sequence.
public enum ImageSequence {
    /// The rate sequences are read at (`--framerate`, ffmpeg's `-framerate`): set once by the
    /// command before any input is opened, so every reader of the input (the render, a matte
    /// beside it) sees the same timing. Nil: image2's default, 25.
    public static var frameRate: String? {
        get { rateLock.withLock { rate } }
        set { rateLock.withLock { rate = newValue } }
    }
    private static let rateLock = NSLock()
    nonisolated(unsafe) private static var rate: String?

    /// The rates `--framerate` takes: MP4 cannot time frames much faster (at 10^6 fps it wrote
    /// one packet), and slower than one frame in 1000 s is no video.
    public static let frameRates: ClosedRange<Double> = 0.001...1000

    /// Whether `text` is a frame rate FFmpeg reads (`30`, `29.97`, `30000/1001`, `ntsc`) in `frameRates`.
    public static func isFrameRate(_ text: String) -> Bool {
        var parsed = AVRational()
        guard av_parse_video_rate(&parsed, text) >= 0, parsed.num > 0, parsed.den > 0 else { return false }
        return frameRates.contains(Double(parsed.num) / Double(parsed.den))
    }

    /// Whether a file's name holds a frame number pattern (`%03d`), as a sequence's does.
    public static func namesFrameNumber(_ path: String) -> Bool {
        av_filename_number_test(URL(fileURLWithPath: path).lastPathComponent) != 0 && av_filename_number_test(path) != 0
    }

    /// Whether the pattern gives each frame a name of its own (FFmpeg writes at most 19
    /// digits: `%025d` names every frame alike).
    public static func isUsable(_ pattern: String) -> Bool {
        guard let one = name(pattern, 1), let two = name(pattern, 2) else { return false }
        return one != two
    }

    public static let unusablePattern = "the frame number is wider than FFmpeg writes (at most %019d): use a narrower one"

    /// Whether `path` names a sequence rather than a file.
    public static func isPattern(_ path: String) -> Bool {
        namesFrameNumber(path) && !FileManager.default.fileExists(atPath: path)
    }

    /// Where FFmpeg looks for the first frame: numbers 0 to 4 (image2's `start_number` 0 and
    /// `start_number_range` 5).
    static let firstNumbers = 0...4

    /// The files of the sequence, in order: from the first number of `firstNumbers` that
    /// exists to the last before a gap (what image2 reads); empty when none exists.
    public static func files(_ pattern: String) -> [String] {
        guard isUsable(pattern), let first = firstNumbers.lazy.compactMap({ name(pattern, $0) }).first(where: exists) else { return [] }
        var files = [first]
        guard var number = firstNumbers.first(where: { name(pattern, $0) == first }) else { return files }
        while let next = name(pattern, number + 1), exists(next) {
            files.append(next)
            number += 1
        }
        return files
    }

    /// The number `file` has in the sequence `pattern` names (nil when it is none of its
    /// files): each run of digits in its name is tried, and `same` decides whether the name
    /// the pattern makes of it is that file.
    public static func number(of file: String, in pattern: String, same: (String, String) -> Bool) -> Int? {
        let name = URL(fileURLWithPath: file).lastPathComponent
        // Every number a run of digits holds, not the whole run alone: `gh1%d.jpg` names
        // frame 1 `gh11.jpg`, whose run is 11 (the pattern's own digits touch the number's).
        let runs = name.split(whereSeparator: { !$0.isASCII || !$0.isNumber }).map(Array.init)
        var numbers: [Int] = []
        for run in runs {
            for start in run.indices {
                for end in (start + 1)...run.count {
                    if let number = Int(String(run[start..<end])), !numbers.contains(number) { numbers.append(number) }
                }
            }
        }
        return numbers.first { number in self.name(pattern, number).map { same($0, file) } ?? false }
    }

    /// A single file's name for what the sequence `pattern` holds (a report beside it): the
    /// frame number and the separators before it left out (`ab_%03d.png` -> `ab.png`).
    public static func stem(of pattern: String) -> String {
        let url = URL(fileURLWithPath: pattern)
        let name = url.lastPathComponent
        guard let token = name.range(of: "%[0-9]*d", options: .regularExpression) else { return pattern }
        var before = name[..<token.lowerBound]
        while let last = before.last, "_-. ".contains(last) { before = before.dropLast() }
        let joined = String(before) + name[token.upperBound...]
        return url.deletingLastPathComponent().appendingPathComponent(joined.hasPrefix(".") ? "sequence" + joined : joined).path
    }

    /// The entries of the pattern's folder that are frames of it (a link counts, wherever it
    /// points): what an output sequence could replace.
    public static func presentOutputs(_ pattern: String) -> [String] {
        let folder = URL(fileURLWithPath: pattern).deletingLastPathComponent()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.map { folder.appendingPathComponent($0).path }.filter { isFrame($0, of: pattern) }
    }

    /// Whether `path` (absolute) is by name one of the frames `pattern` names.
    public static func isFrame(_ path: String, of pattern: String) -> Bool {
        number(of: path, in: pattern, same: { URL(fileURLWithPath: $0).path == $1 }) != nil
    }

    /// Frame numbers at which two patterns' names are compared: where one of each width is made.
    public static let sampleNumbers = [1, 10, 100, 1000, 10000, 100000]

    /// The file name of frame `number`; nil when the pattern cannot make one.
    public static func name(_ pattern: String, _ number: Int) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard av_get_frame_filename(&buffer, Int32(buffer.count), pattern, Int32(number)) >= 0 else { return nil }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    private static func exists(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
    }
}
