import CFFmpeg
import Foundation
import VelvetGPU

/// About how much memory a render of one frame size takes, CPU and GPU, from the frames and
/// images it keeps: checked before decoding, so a frame too large for the machine is
/// refused with a reason instead of swapping or being killed. The figures were measured
/// (docs/RELIABILITY.md, Memory) and err on the large side.
public struct MemoryEstimate {
    var cpuBytes: Double
    var gpuBytes: Double
    var totalBytes: Double { cpuBytes + gpuBytes }

    /// Process, libraries, Vulkan driver, FFmpeg.
    static let baseBytes = 160.0 * 1024 * 1024
    /// What effects hold whatever the frame size: the face models' plans and weights, every
    /// kernel's pipeline (on lavapipe, compiled code in host memory). Measured: 130–150 MB of
    /// peak RSS over the same render without effects, 64x64 to 320x240 (docs/RELIABILITY.md, Memory).
    static let effectsBaseBytes = 160.0 * 1024 * 1024
    /// Frames a video render holds besides the encoder's lookahead and the queues between its
    /// threads, each as decoded and as written: the decoder's references and threads, one per stage.
    static let videoFramesBesideTheQueues = 10.0
    /// x264 keeps about three frames' worth per lookahead frame (its copy, lowres planes, costs).
    static let bytesPerLookaheadFrame = 3.0

    /// - Parameters:
    ///   - input, output: the GPU layouts the frames are read from and written to.
    ///   - repackedBytesPerPixel: the decoder's own frames when they are repacked for the GPU
    ///     (`PixelRepacker`), else 0.
    ///   - effectBytesPerPixel: what the effects keep (`FrameEffect.workingBytesPerPixel`);
    ///     nil without effects.
    ///   - queueDepth: frames each of the two queues between the threads holds (`ThreadQueues`).
    ///   - encoderLookahead: frames the encoder holds before it writes one.
    ///   - effectLookAhead: the effects' look-ahead (`FrameEffect.lookAhead`): K + L + F decoded
    ///     frames are held at once (frames up to N + K + L are looked at while frame N is
    ///     recorded, L = `FrameProcessor.lookAheadLead`, and F frames are in flight).
    ///   - framesInFlight: with a look-ahead, frames submitted and not yet waited for (F,
    ///     `FrameEffect.framesInFlight`), each with its own upload and readback staging.
    ///   - keepsLookAheadImages: the look-ahead keeps a working image per plane set (`FrameProcessor`).
    ///   - effectLookAheadBytesPerPixel: what the effects keep more with a look-ahead
    ///     (`FrameEffect.lookAheadBytesPerPixel`).
    init(width: Int, height: Int, input: VideoPlaneLayout, output: VideoPlaneLayout, repackedBytesPerPixel: Double,
         isVideo: Bool, queueDepth: Int = ThreadQueues.fewestFrames, effectBytesPerPixel: Int?, encoderLookahead: Int, effectLookAhead: Int = 0, framesInFlight: Int = 1,
         keepsLookAheadImages: Bool = false, effectLookAheadBytesPerPixel: Int = 0) {
        let pixels = Double(width) * Double(height)
        // Planes in and out with their staging buffers, the working image (rgba16f), and with
        // effects their result (rgba16f) and their own images; with a look-ahead, its own
        // working images (`FrameProcessor.lookAheadImageSets`) and the input planes of the frames
        // shown to it and not yet rendered (`FrameProcessor.lookAheadPlaneSets`; the effects'
        // count still holds the tracker's copy of the last frame, which the look-ahead does without).
        let effects = effectBytesPerPixel.map { 8 + Double($0) } ?? 0
        let planeSets = FrameProcessor.lookAheadPlaneSets(lookAhead: effectLookAhead, framesInFlight: framesInFlight)
        let lookAheadImages = effectLookAhead > 0
            ? Double(FrameProcessor.lookAheadImageSets(lookAhead: effectLookAhead, framesInFlight: framesInFlight,
                                                     keepsImages: keepsLookAheadImages)) * 8
                + Double(planeSets) * input.bytesPerPixel + Double(effectLookAheadBytesPerPixel) : 0
        let inFlight = Double(effectLookAhead > 0 ? framesInFlight : 1)
        gpuBytes = pixels * ((1 + inFlight) * (input.bytesPerPixel + output.bytesPerPixel) + 8 + effects + lookAheadImages)
        let decoded = input.bytesPerPixel + repackedBytesPerPixel
        // The decoded queue's frames, and the one being staged, also hold their planes copied
        // into upload staging (`FrameStaging`).
        let frames = isVideo
            ? (Self.videoFramesBesideTheQueues + 2 * Double(queueDepth)) * (decoded + output.bytesPerPixel)
                + Double(queueDepth + 1) * input.bytesPerPixel
                + Double(encoderLookahead) * Self.bytesPerLookaheadFrame * output.bytesPerPixel
                + (effectLookAhead > 0 ? Double(effectLookAhead + FrameProcessor.lookAheadLead) + inFlight : 0) * decoded
            : decoded + 2 * output.bytesPerPixel
        cpuBytes = Self.baseBytes + (effectBytesPerPixel == nil ? 0 : Self.effectsBaseBytes) + pixels * frames
    }

    /// A render's estimate: `effect`'s images and look-ahead (when `looksAhead`), the encoder's lookahead.
    static func render(width: Int, height: Int, input: VideoPlaneLayout, output: VideoPlaneLayout, repackedBytesPerPixel: Double,
                       isVideo: Bool, queueDepth: Int, effect: FrameEffect?, settings: EncoderSettings, looksAhead: Bool,
                       keepsLookAheadImages: Bool) -> MemoryEstimate {
        MemoryEstimate(width: width, height: height, input: input, output: output, repackedBytesPerPixel: repackedBytesPerPixel,
                       isVideo: isVideo, queueDepth: queueDepth, effectBytesPerPixel: effect?.workingBytesPerPixel,
                       encoderLookahead: lookahead(preset: settings.preset), effectLookAhead: looksAhead ? effect?.lookAhead ?? 0 : 0,
                       framesInFlight: FrameProcessor.framesInFlight(for: effect), keepsLookAheadImages: keepsLookAheadImages,
                       effectLookAheadBytesPerPixel: effect?.lookAheadBytesPerPixel ?? 0)
    }

    /// Refuses, before anything is written, a yuv420p video of `width`x`height` that a render
    /// with `effect` and `settings` on `context` would refuse for its memory: for a command
    /// that makes such a video to render it (`velvet demo`), so it does not write the video first.
    public static func checkVideo(width: Int, height: Int, effect: FrameEffect?, settings: EncoderSettings = EncoderSettings(),
                                  context: GPUContext, path: String) throws {
        let layout = VideoPlaneLayout.closestReadable(to: AV_PIX_FMT_YUV420P)
        let estimate = render(width: width, height: height, input: layout, output: layout, repackedBytesPerPixel: 0, isVideo: true,
                              queueDepth: ThreadQueues.depth(frameBytes: Double(width * height) * layout.bytesPerPixel), effect: effect,
                              settings: settings, looksAhead: true,
                              keepsLookAheadImages: FrameProcessor.keepsLookAheadImages(on: context.device.kind))
        try MemoryLimit.check(estimate, width: width, height: height, path: path)
    }

    /// Frames x264 (and x265, which holds fewer) keeps for its lookahead at each preset.
    static func lookahead(preset: String) -> Int {
        ["ultrafast": 0, "superfast": 0, "veryfast": 10, "faster": 20, "fast": 30, "medium": 40,
         "slow": 50, "slower": 60, "veryslow": 60][preset] ?? 60
    }
}

/// The most memory a render may plan to use: VELVET_MEMORY_LIMIT (`16G`, `512M`, `none`),
/// else 8 GiB or three quarters of the machine's memory, whichever is less.
struct MemoryLimit {
    static let variable = "VELVET_MEMORY_LIMIT"
    static var defaultBytes: Double {
        min(8 * 0x1p30, 0.75 * Double(ProcessInfo.processInfo.physicalMemory))
    }
    /// nil: no limit.
    let bytes: Double?

    /// Nil when the variable holds no size.
    init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let text = environment[Self.variable]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else {
            bytes = Self.defaultBytes
            return
        }
        if text.lowercased() == "none" { bytes = nil; return }
        guard let value = Self.parse(text) else { return nil }
        bytes = value
    }

    static var malformed: String {
        "\(variable) must be a size such as 16G or 512M (or none), got '\(ProcessInfo.processInfo.environment[variable] ?? "")'"
    }

    /// "16G", "512M", "1.5T", "65536K", "123456" (bytes); binary units.
    static func parse(_ text: String) -> Double? {
        let units: [Character: Double] = ["K": 0x1p10, "M": 0x1p20, "G": 0x1p30, "T": 0x1p40]
        var number = text.uppercased()
        if number.hasSuffix("IB") { number.removeLast(2) } else if number.hasSuffix("B") { number.removeLast() }
        let scale = number.last.flatMap { units[$0] }
        if scale != nil { number.removeLast() }
        // Digits with at most one point: Double() also takes "1e3", "0x10", "inf" and "nan".
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let value = Double(number), value > 0, value.isFinite, (value * (scale ?? 1)).isFinite else { return nil }
        return value * (scale ?? 1)
    }

    /// Throws the refusal of `estimate` for the input (or output) at `path`, or of a malformed limit.
    static func check(_ estimate: MemoryEstimate, width: Int, height: Int, path: String) throws {
        guard let limit = MemoryLimit() else { throw MediaError.refused(path: path, reason: malformed) }
        if let reason = limit.refusal(estimate, width: width, height: height) { throw MediaError.refused(path: path, reason: reason) }
    }

    /// The reason an estimate is refused, or nil when it fits.
    func refusal(_ estimate: MemoryEstimate, width: Int, height: Int) -> String? {
        guard let bytes, estimate.totalBytes > bytes else { return nil }
        let suggested = Int((estimate.totalBytes / 0x1p30).rounded(.up))
        return "frame size \(width)x\(height) needs about \(Self.format(estimate.totalBytes)) of memory "
            + "(\(Self.format(estimate.cpuBytes)) CPU + \(Self.format(estimate.gpuBytes)) GPU), above the limit of "
            + "\(Self.format(bytes)); set \(Self.variable)=\(suggested)G to allow it"
    }

    static func format(_ bytes: Double) -> String {
        if bytes >= Double(1 << 30) { return String(format: "%.1f GiB", bytes / Double(1 << 30)) }
        return bytes >= Double(1 << 20) ? String(format: "%.0f MiB", bytes / Double(1 << 20)) : String(format: "%.0f KiB", bytes / Double(1 << 10))
    }
}
