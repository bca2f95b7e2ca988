import Foundation
import VelvetFiles
import VelvetGPU
import VelvetMedia

/// The synthetic clips the benchmarks render: a face photo filling the frame (face in the
/// upper middle) under a motion, with sensor-like noise. Made once and kept at `path`.
enum FaceClip {
    /// A short tag of `photo` (its resolved path, size and modification time) for the clip's
    /// name, so a clip made from another photo of the same name, or from this one before it
    /// changed, is not taken for it; a missing photo is an error even when a clip is kept.
    static func tag(of photo: String) throws -> String {
        var info = stat()
        guard stat(photo, &info) == 0 else { throw MediaError.cannotOpen(path: photo, reason: "no such file") }
        let key = "\(URL(fileURLWithPath: photo).resolvingSymlinksInPath().path) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
        return String(FNV1a.hex(key).prefix(8))
    }

    /// `motion(t, scale)` gives frame `t`'s transform from the scale that fills the frame.
    static func make(_ path: String, photo: String, size: (width: Int, height: Int), frames: Int, noise: Float,
                     settings: EncoderSettings, context: GPUContext,
                     motion: (Int, Double) -> SimilarityTransform) throws {
        guard !FileManager.default.fileExists(atPath: path) else { return }
        let image = try ImageLoader.load(photo, context: context)
        let fill = max(Double(size.width) / Double(image.width), Double(size.height) / Double(image.height)) * 1.25
        try ClipSynthesizer(context: context).write(photo: image, to: path, width: size.width, height: size.height,
                                                    frames: frames, noiseSigma: noise, settings: settings) { motion($0, fill) }
    }
}

/// A clip the benchmarks keep that no longer reads (damaged on disk after it was made): what
/// to do about it, not only what the decoder said.
struct DamagedKeptClip: Error, CustomStringConvertible {
    let path: String
    let error: MediaError

    var description: String {
        "the benchmark's kept clip \(path) does not read (\(Self.reason(error))): remove it, and the next run makes it again"
    }

    /// Runs `body`; a read error of one of `clips` comes out as this error.
    static func naming<T>(_ clips: [String], _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as MediaError {
            guard let path = inputPath(of: error), clips.contains(path) else { throw error }
            throw DamagedKeptClip(path: path, error: error)
        }
    }

    private static func inputPath(of error: MediaError) -> String? {
        switch error {
        case .cannotOpen(let path, _), .decode(let path, _), .truncated(let path, _, _), .noVideoStream(let path): path
        default: nil
        }
    }

    private static func reason(_ error: MediaError) -> String {
        switch error {
        case .cannotOpen(_, let reason), .decode(_, let reason), .truncated(_, _, let reason): reason
        default: "no video stream"
        }
    }
}
