import Foundation

/// About how much memory a render of one frame size takes, CPU and GPU, from the frames and
/// images it keeps: checked before decoding, so a frame too large for the machine is
/// refused with a reason instead of swapping or being killed. The figures were measured
/// (docs/RELIABILITY.md, Memory) and err on the large side.
struct MemoryEstimate {
    var cpuBytes: Double
    var gpuBytes: Double
    var totalBytes: Double { cpuBytes + gpuBytes }

    /// Process, libraries, Vulkan driver and (with effects) the face models.
    static let baseBytes = 160.0 * 1024 * 1024
    /// Decoded frames held at once by a video render beyond the encoder's lookahead: the
    /// decoder's reference frames and threads, the two 3-frame queues, the frame in each stage.
    static let videoFramesInFlight = 24.0

    /// - Parameters:
    ///   - input, output: the GPU layouts the frames are read from and written to.
    ///   - repackedBytesPerPixel: the decoder's own frames when they are repacked for the GPU
    ///     (`PixelRepacker`), else 0.
    ///   - effectBytesPerPixel: what the effects keep per pixel (`FrameEffect.workingBytesPerPixel`).
    ///   - encoderLookahead: frames the encoder holds before it writes one.
    init(width: Int, height: Int, input: VideoPlaneLayout, output: VideoPlaneLayout, repackedBytesPerPixel: Double,
         isVideo: Bool, effectBytesPerPixel: Int, encoderLookahead: Int) {
        let pixels = Double(width) * Double(height)
        // Planes in and out with their staging buffers, the working image and the effects' result (rgba16f each).
        gpuBytes = pixels * (2 * input.bytesPerPixel + 2 * output.bytesPerPixel + 16 + Double(effectBytesPerPixel))
        let decoded = input.bytesPerPixel + repackedBytesPerPixel
        let frames = isVideo ? (Self.videoFramesInFlight, Self.videoFramesInFlight + Double(encoderLookahead)) : (1.0, 2.0)
        cpuBytes = Self.baseBytes + pixels * (frames.0 * decoded + frames.1 * output.bytesPerPixel)
    }

    /// Frames x264 (and x265, which holds fewer) keeps for its lookahead at each preset.
    static func lookahead(preset: String) -> Int {
        ["ultrafast": 0, "superfast": 0, "veryfast": 10, "faster": 20, "fast": 30, "medium": 40,
         "slow": 50, "slower": 60, "veryslow": 60][preset] ?? 60
    }
}

/// The most memory a render may plan to use: 8 GiB, or VELVET_MEMORY_LIMIT (`16G`, `512M`,
/// `none`).
struct MemoryLimit {
    static let variable = "VELVET_MEMORY_LIMIT"
    static let defaultBytes = 8.0 * 1024 * 1024 * 1024
    /// nil: no limit.
    let bytes: Double?

    init(environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard let text = environment[Self.variable]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else {
            bytes = Self.defaultBytes
            return
        }
        if text.lowercased() == "none" { bytes = nil; return }
        guard let value = Self.parse(text) else {
            throw MediaError.unsupported("\(Self.variable) must be a size such as 16G or 512M (or none), got '\(text)'")
        }
        bytes = value
    }

    /// "16G", "512M", "1.5T", "65536K", "123456" (bytes); binary units.
    static func parse(_ text: String) -> Double? {
        let units: [Character: Double] = ["K": 0x1p10, "M": 0x1p20, "G": 0x1p30, "T": 0x1p40]
        var number = text.uppercased()
        if number.hasSuffix("IB") { number.removeLast(2) } else if number.hasSuffix("B") { number.removeLast() }
        let scale = number.last.flatMap { units[$0] }
        if scale != nil { number.removeLast() }
        guard let value = Double(number), value > 0 else { return nil }
        return value * (scale ?? 1)
    }

    /// The reason an estimate is refused, or nil when it fits.
    func refusal(_ estimate: MemoryEstimate, width: Int, height: Int) -> String? {
        guard let bytes, estimate.totalBytes > bytes else { return nil }
        let suggested = Int((estimate.totalBytes / Double(1 << 30)).rounded(.up)) + 1
        return "frame size \(width)x\(height) needs about \(Self.format(estimate.totalBytes)) of memory "
            + "(\(Self.format(estimate.cpuBytes)) CPU + \(Self.format(estimate.gpuBytes)) GPU), above the limit of "
            + "\(Self.format(bytes)); set \(Self.variable)=\(suggested)G to allow it"
    }

    static func format(_ bytes: Double) -> String {
        bytes >= Double(1 << 30) ? String(format: "%.1f GiB", bytes / Double(1 << 30)) : String(format: "%.0f MiB", bytes / Double(1 << 20))
    }
}
