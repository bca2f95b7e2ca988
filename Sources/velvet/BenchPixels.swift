import Foundation
import VelvetGPU
import VelvetMedia

/// The picture a GPU benchmark works on: a raw RGBA8 file of exactly `width` x `height`, or
/// without one a fixed pseudo-random pattern (the same bytes every run, so runs compare).
enum BenchPixels {
    static func load(_ inputPath: String?, width: Int, height: Int) throws -> [UInt8] {
        guard let inputPath else {
            return (0..<(width * height * 4)).map { UInt8(truncatingIfNeeded: ($0 &* 2654435761) >> 13) }
        }
        guard FileManager.default.fileExists(atPath: inputPath) else { throw MediaError.cannotOpen(path: inputPath, reason: "no such file") }
        guard let data = FileManager.default.contents(atPath: inputPath), data.count == width * height * 4 else {
            throw GPUError.invalidArgument("\(inputPath): expected \(width * height * 4) bytes of raw RGBA8 (\(width)x\(height))")
        }
        return [UInt8](data)
    }
}
