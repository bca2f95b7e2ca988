import CFFmpeg
import Foundation

/// A user's own matte, frame by frame (`render --matte-in`): a grey picture or video, or
/// the alpha of one that has alpha, as 16-bit values (0 ... 65535 for 0 ... 1). It must
/// have the input's upright size. A still matte holds for every frame; a video matte gives
/// one frame per input frame and must have as many: a count both containers declare is
/// compared before rendering, and a matte that ends before the input fails the render.
public final class MatteReader: @unchecked Sendable {
    public let path: String
    public let width: Int
    public let height: Int
    public let isStillImage: Bool
    private let reader: MediaReader
    private let repacker = PixelRepacker()
    private var still: [UInt16]?
    public private(set) var framesRead = 0

    /// Opens `path` and checks it against `input` (size, declared frame count); each
    /// mismatch is one line.
    public init(path: String, input: String) throws {
        self.path = path
        reader = try MediaReader(path: path)
        let inputInfo = try MediaReader(path: input).info
        let info = reader.info
        width = info.width
        height = info.height
        isStillImage = info.isStillImage
        let expected = inputInfo.uprightSize
        guard (width, height) == expected else {
            throw MediaError.refused(path: path, reason: "the matte is \(width)x\(height) and the input \(expected.width)x\(expected.height) "
                                     + "(upright): give it the input's size")
        }
        if !isStillImage, inputInfo.isStillImage {
            throw MediaError.refused(path: path, reason: "the input is one picture: give a still matte (.png)")
        }
        if !isStillImage, let frames = info.countedFrames, let inputFrames = inputInfo.countedFrames,
           frames != inputFrames {
            throw MediaError.refused(path: path, reason: "the matte has \(frames) frames and the input \(inputFrames): give it as many")
        }
    }

    /// The matte of the next frame, row by row. A still matte returns its one picture every time.
    public func next() throws -> [UInt16] {
        if let still { return still }
        while let item = try reader.next() {
            guard case .video(let frame) = item else { continue }
            framesRead += 1
            let values = try Self.values(of: frame, repacker: repacker, path: path, size: (width, height))
            if isStillImage { still = values }
            return values
        }
        throw MediaError.refused(path: path, reason: "the matte ends after \(framesRead) frame(s) and the input has more: give it as many")
    }

    /// The alpha of a frame that has alpha, else its grey (luma), as 16-bit values.
    private static func values(of frame: MediaFrame, repacker: PixelRepacker, path: String,
                               size: (width: Int, height: Int)) throws -> [UInt16] {
        guard (frame.width, frame.height) == size else {
            throw MediaError.decode(path: path, reason: "a frame of \(frame.width)x\(frame.height) in a \(size.width)x\(size.height) matte")
        }
        let flags = av_pix_fmt_desc_get(frame.pixelFormat)?.pointee.flags ?? 0
        let alpha = flags & UInt64(AV_PIX_FMT_FLAG_ALPHA) != 0
        let target = alpha ? AV_PIX_FMT_RGBA64LE : AV_PIX_FMT_GRAY16LE
        let converted = frame.pixelFormat == target ? frame : try repacker.repack(frame, to: target)
        let stride = alpha ? 4 : 1, channel = alpha ? 3 : 0
        let pitch = Int(velvet_frame_linesize(converted.pointer, 0))
        let base = UnsafeRawPointer(velvet_frame_data(converted.pointer, 0)!)
        var values = [UInt16](repeating: 0, count: size.width * size.height)
        for y in 0..<size.height {
            let row = (base + y * pitch).bindMemory(to: UInt16.self, capacity: size.width * stride)
            for x in 0..<size.width { values[y * size.width + x] = UInt16(littleEndian: row[x * stride + channel]) }
        }
        return values
    }
}

/// What a render's input holds, read from its headers before any work.
public struct InputProbe: Sendable {
    /// The size of the upright frames the effects see (the stream's rotation applied).
    public let uprightWidth: Int
    public let uprightHeight: Int
    public let isStillImage: Bool
    /// The frame count the container states as a count (1 for a still); nil when it states
    /// none (a duration is no exact count).
    public let declaredFrames: Int?

    public init(path: String) throws {
        let info = try MediaReader(path: path).info
        (uprightWidth, uprightHeight) = info.uprightSize
        isStillImage = info.isStillImage
        declaredFrames = info.isStillImage ? 1 : info.countedFrames
    }
}

extension MediaInfo {
    /// The frame count the container states as a count, not estimated from a duration.
    var countedFrames: Int? {
        guard case .frames(let count)? = declaredLength?.basis else { return nil }
        return count
    }
}
