/// How many frames each queue between a render's threads holds (decoded → GPU thread,
/// GPU thread → encoder). The slack lets a frame that takes long on one thread pass without
/// stalling the others: with 8 frames instead of 3, a 720p render at x264 ultrafast (about
/// 1.2 ms a frame) went from 0.83x to 0.90x of the plain transcode on an H100, mean of four
/// alternated runs (docs/PERFORMANCE.md); 16 gained nothing more. Large frames keep fewer:
/// about 64 MB a queue, never under 3.
enum ThreadQueues {
    static let fewestFrames = 3
    static let mostFrames = 8
    static let bytesPerQueue = 64.0 * 1024 * 1024

    static func depth(frameBytes: Double) -> Int {
        guard frameBytes > 0 else { return fewestFrames }
        return max(fewestFrames, min(mostFrames, Int(bytesPerQueue / frameBytes)))
    }
}
