import Foundation
import VelvetBeauty
import VelvetGPU
import VelvetMedia
import VelvetPipeline

/// `velvet bench soak`: renders a long synthetic clip (a face photo with slow motion) with
/// the default preset and samples resident memory and GPU memory every `--every` frames.
/// Prints a table and the growth after warm-up; fails if the output's frame count differs,
/// validation (when on) reported anything, resident memory grew more than `--max-growth`
/// per cent (docs/RELIABILITY.md's bar: 2 %) or the GPU memory blocks grew at all.
enum SoakCommand {
    static func run(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        let frames = try arguments.int("--frames", default: 10_000, range: 10...1_000_000)
        let every = try arguments.int("--every", default: 500, range: 1...100_000)
        let size = try MediaBenchmark.parseSize(arguments.value("--size") ?? "1280x720")
        let photo = arguments.value("--photo") ?? "test-assets/grace_hopper.jpg"
        let workDir = arguments.value("--work-dir")
        try CommandFiles.refuseStandardStream(workDir, option: "--work-dir")
        let request = arguments.value("--device")
        let maxGrowth = try arguments.float("--max-growth", default: 2, range: -100...1000)
        try arguments.finish()
        let directory = try BenchWorkDirectory.resolve(workDir)
        let clip = directory + "/velvet-soak-\(try FaceClip.tag(of: photo))-\(size.width)x\(size.height)-\(frames).mp4"
        let output = directory + "/velvet-soak-out.mp4"
        try CommandFiles.checkScratch(photo: photo, [clip, output])

        let context = try GPUContext(request: request)
        var clipSettings = EncoderSettings()
        clipSettings.preset = "ultrafast"
        try FaceClip.make(clip, photo: photo, size: size, frames: frames, noise: 1 / 255, settings: clipSettings,
                          context: context) { index, fill in
            let t = Double(index) / 250
            return SimilarityTransform(scale: fill * (1 + 0.05 * sin(t)), rotation: 0.1 * sin(0.7 * t),
                                       translation: (x: 30 * sin(0.5 * t), y: Double(size.height) * 0.3))
        }
        let sampler = MemorySampler(context: context, every: every,
                                    effect: try BeautyEffect(context: context, options: BeautyArguments.defaultOptions(smoothing: .frequencySeparation, context: context)))
        var settings = EncoderSettings()
        settings.preset = "ultrafast"
        let summary = try VideoRenderer(context: context).render(input: clip, output: output, settings: settings, effect: sampler)

        print("Soak: \(summary.frames) frames of \(size.width)x\(size.height), default preset, \(context.device.name), "
              + String(format: "%.1f fps", summary.framesPerSecond) + "\n")
        print("| frame | RSS MiB | GPU memory blocks MiB |")
        print("|---:|---:|---:|")
        for sample in sampler.samples {
            print("| \(sample.frame) | \(String(format: "%.1f", sample.rss)) | \(String(format: "%.1f", sample.gpu)) |")
        }
        guard summary.frames == frames else {
            throw MediaError.encode("soak rendered \(summary.frames) of \(frames) frames")
        }
        try ValidationReport.check(context)
        // Warm-up: the first two samples (pools, caches and encoder lookahead fill up).
        let settled = sampler.samples.dropFirst(2)
        guard let first = settled.first, let last = settled.last, settled.count >= 2 else {
            print("\nToo short to judge growth: fewer than 4 samples (--frames / --every)")
            return
        }
        let growth = (last.rss - first.rss) / first.rss * 100
        print(String(format: "\nRSS growth after warm-up: %.2f %% (frame %d -> %d); GPU memory %.1f -> %.1f MiB",
                     growth, first.frame, last.frame, first.gpu, last.gpu))
        if Float(growth) > maxGrowth {
            throw SoakFailure(String(format: "resident memory grew %.2f %% after warm-up (frame %d -> %d), above the %g %% bar (--max-growth)",
                                     growth, first.frame, last.frame, Double(maxGrowth)))
        }
        if last.gpu > first.gpu {
            throw SoakFailure(String(format: "GPU memory blocks grew from %.1f to %.1f MiB after warm-up (frame %d -> %d); the bar is no growth",
                                     first.gpu, last.gpu, first.frame, last.frame))
        }
    }

    struct SoakFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

/// Wraps the beauty effect and records memory every `every` frames.
private final class MemorySampler: FrameEffect, @unchecked Sendable {
    struct Sample { let frame: Int; let rss: Double; let gpu: Double }
    private let context: GPUContext
    private let every: Int
    private let effect: FrameEffect
    private(set) var samples: [Sample] = []

    init(context: GPUContext, every: Int, effect: FrameEffect) {
        (self.context, self.every, self.effect) = (context, every, effect)
    }

    var minimumFrameSide: Int { effect.minimumFrameSide }
    var workingBytesPerPixel: Int { effect.workingBytesPerPixel }
    var lookAheadBytesPerPixel: Int { effect.lookAheadBytesPerPixel }
    var lookAhead: Int { effect.lookAhead }
    var framesInFlight: Int { effect.framesInFlight }
    func look(ahead frame: EffectFrame) throws { try effect.look(ahead: frame) }
    func completed(frame index: Int) throws { try effect.completed(frame: index) }

    func record(_ frame: EffectFrame, on recorder: CommandRecorder) throws -> FrameChange {
        if frame.index % every == 0 {
            samples.append(Sample(frame: frame.index, rss: Self.residentMiB(), gpu: Double(context.memoryBlockBytes) / 1_048_576))
        }
        return try effect.record(frame, on: recorder)
    }

    /// Resident set size from /proc/self/statm (pages).
    static func residentMiB() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Double(fields[1]) else { return 0 }
        return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
    }
}
