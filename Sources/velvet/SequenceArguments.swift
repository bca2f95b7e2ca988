import VelvetMedia

/// `--framerate R`: the rate an image sequence input (`img%04d.png`) is read at, as ffmpeg's
/// `-framerate` (default 25). Taken by the commands that read one input: render, compare, analyze.
enum SequenceArguments {
    static func parse(_ arguments: inout ArgumentParser, input: String) throws {
        guard let rate = arguments.value("--framerate") else { return }
        guard ImageSequence.isFrameRate(rate) else {
            throw UsageError("--framerate must be a rate such as 24, 29.97 or 30000/1001 (\(ImageSequence.frameRates.lowerBound) to "
                             + "\(Int(ImageSequence.frameRates.upperBound)) a second), got '\(rate)'")
        }
        guard ImageSequence.isPattern(input) else {
            throw UsageError("--framerate sets the rate of an image sequence input (img%04d.png); \(input) is not one")
        }
        ImageSequence.frameRate = rate
    }
}
