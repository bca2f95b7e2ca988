import CFFmpeg
import Foundation

/// A user's own matte, frame by frame (`render --matte-in`): a grey picture or video, or
/// the alpha of one that has alpha, as 16-bit values (0 ... 65535 for 0 ... 1). It must
/// have the input's upright size, upright by the matte's own display matrix or EXIF
/// orientation, which are applied to it as to the input. A still matte holds for every
/// frame; a video matte gives one frame per input frame and must have as many: a count both
/// containers declare is compared before rendering, and a matte that ends before the input
/// fails the render.
public final class MatteReader: @unchecked Sendable {
    public let path: String
    public let width: Int
    public let height: Int
    public let isStillImage: Bool
    private let reader: MediaReader
    private var still: [UInt16]?
    public private(set) var framesRead = 0

    /// Opens `path` and checks it against `input` (size, declared frame count); each
    /// mismatch is one line.
    public init(path: String, input: String) throws {
        self.path = path
        reader = try MediaReader(path: path)
        let inputInfo = try MediaReader(path: input).info
        let info = reader.info
        (width, height) = inputInfo.uprightSize
        isStillImage = info.isStillImage
        // A still's EXIF orientation is known once it decodes: either way round may fit here.
        let upright = info.uprightSize
        guard upright == (width, height) || (isStillImage && (upright.height, upright.width) == (width, height)) else {
            throw Self.sizeMismatch(path, upright, (width, height))
        }
        if !isStillImage, inputInfo.isStillImage {
            throw MediaError.refusedMatte(path: path, reason: "the input is one picture: give a still matte (.png)")
        }
        if !isStillImage, let frames = info.countedFrames, let inputFrames = inputInfo.countedFrames,
           frames != inputFrames {
            throw MediaError.refusedMatte(path: path, reason: "the matte has \(frames) frames and the input \(inputFrames): give it as many")
        }
    }

    /// A matte must decode whole: `--allow-truncated` keeps what decodes of the input only,
    /// so the refusal does not offer it.
    private func wholeMatte<T>(_ read: () throws -> T) throws -> T {
        do {
            return try read()
        } catch MediaError.truncated(let path, let frames, let reason) {
            throw MediaError.decode(path: path, reason: "the matte is damaged or truncated after \(frames) frame(s) (\(reason)); "
                                    + "a matte must decode whole")
        }
    }

    /// The matte of the next frame, row by row. A still matte returns its one picture every time.
    public func next() throws -> [UInt16] {
        if let still { return still }
        while let item = try wholeMatte({ try reader.next() }) {
            guard case .video(let frame) = item else { continue }
            framesRead += 1
            let orientation = (isStillImage ? reader.exifOrientation(of: frame) : nil) ?? reader.info.orientation
            let upright = orientation.uprightSize(width: frame.width, height: frame.height)
            guard upright == (width, height) else {
                throw isStillImage ? Self.sizeMismatch(path, upright, (width, height))
                    : MediaError.decode(path: path, reason: "a frame of \(upright.width)x\(upright.height) in a \(width)x\(height) matte")
            }
            let stored = try Self.values(of: frame, path: path)
            let values = orientation == .identity ? stored : Self.turned(stored, by: orientation, storedWidth: frame.width,
                                                                           storedHeight: frame.height)
            if isStillImage { still = values }
            return values
        }
        throw MediaError.refusedMatte(path: path, reason: "the matte ends after \(framesRead) frame(s) and the input has more: give it as many")
    }

    private static func sizeMismatch(_ path: String, _ matte: (width: Int, height: Int), _ input: (width: Int, height: Int)) -> MediaError {
        MediaError.refusedMatte(path: path, reason: "the matte is \(matte.width)x\(matte.height) and the input \(input.width)x\(input.height) "
                           + "(upright): give it the input's size")
    }

    /// Stored values rearranged into the upright frame.
    private static func turned(_ stored: [UInt16], by orientation: Orientation, storedWidth: Int, storedHeight: Int) -> [UInt16] {
        let upright = orientation.uprightSize(width: storedWidth, height: storedHeight)
        var values = [UInt16](repeating: 0, count: stored.count)
        for y in 0..<upright.height {
            for x in 0..<upright.width {
                let (sx, sy) = orientation.storedPixel((x, y), storedWidth: storedWidth, storedHeight: storedHeight)
                values[y * upright.width + x] = stored[sy * storedWidth + sx]
            }
        }
        return values
    }

    /// The alpha of a frame that has alpha, else its grey (luma; RGB whose channels agree),
    /// as 16-bit values, read straight from the decoded planes (swscale would lose the low
    /// bits of 16-bit grey). Limited-range luma (16...235 at 8 bits) is stretched to 0...1.
    private static func values(of frame: MediaFrame, path: String) throws -> [UInt16] {
        let size = (width: frame.width, height: frame.height)
        let unsupported = MediaError.unsupported("matte \(path): pixel format \(PixelRepacker.name(frame.pixelFormat)) "
                                                 + "(give grey or alpha of 8 to 16 bits)")
        guard let descriptor = av_pix_fmt_desc_get(frame.pixelFormat)?.pointee else { throw unsupported }
        let unreadable = UInt64(AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_FLOAT)
        let alpha = descriptor.flags & UInt64(AV_PIX_FMT_FLAG_ALPHA) != 0
        // Alpha is the last component (grey + alpha, ya8, has two).
        let components = [descriptor.comp.0, descriptor.comp.1, descriptor.comp.2, descriptor.comp.3]
        let component = alpha ? components[max(Int(descriptor.nb_components) - 1, 0)] : components[0]
        guard descriptor.flags & unreadable == 0, (1...16).contains(component.depth) else { throw unsupported }
        let bigEndian = descriptor.flags & UInt64(AV_PIX_FMT_FLAG_BE) != 0
        let isYUV = descriptor.flags & UInt64(AV_PIX_FMT_FLAG_RGB) == 0 && descriptor.nb_components >= 3
        let depth = Int(component.depth), top = Double((1 << depth) - 1)
        // Limited-range luma: 16...235 scaled to the depth.
        let limited = !alpha && isYUV && frame.pointer.pointee.color_range != AVCOL_RANGE_JPEG
            && !PixelRepacker.name(frame.pixelFormat).hasPrefix("yuvj")
        let (low, span) = limited ? (Double(16 << (depth - 8)), Double(219 << (depth - 8))) : (0, top)
        let mask = (1 << depth) - 1
        /// The level of `component` at a pixel.
        func reader(_ component: AVComponentDescriptor) -> (Int, Int) -> Int {
            let plane = Int(component.plane), step = Int(component.step), offset = Int(component.offset), shift = Int(component.shift)
            let pitch = Int(velvet_frame_linesize(frame.pointer, Int32(plane)))
            let base = UnsafeRawPointer(velvet_frame_data(frame.pointer, Int32(plane))!)
            return { x, y in
                let at = base + y * pitch + offset + x * step
                let raw = depth > 8 ? Int(bigEndian ? UInt16(bigEndian: at.loadUnaligned(as: UInt16.self))
                                                    : UInt16(littleEndian: at.loadUnaligned(as: UInt16.self)))
                                    : Int(at.load(as: UInt8.self))
                return (raw >> shift) & mask
            }
        }
        let level = reader(component)
        // RGB without alpha is read as grey: a colour one (a red roto) would be read by one
        // channel alone, so green or blue did nothing.
        if !alpha && !isYUV && descriptor.nb_components >= 3 {
            let green = reader(components[1]), blue = reader(components[2])
            for y in 0..<size.height {
                for x in 0..<size.width where green(x, y) != level(x, y) || blue(x, y) != level(x, y) {
                    throw MediaError.unsupported("matte \(path) is in colour (its red, green and blue differ): give a grey picture or "
                                                 + "video, or one with alpha")
                }
            }
        }
        var values = [UInt16](repeating: 0, count: size.width * size.height)
        for y in 0..<size.height {
            for x in 0..<size.width {
                values[y * size.width + x] = UInt16((min(max((Double(level(x, y)) - low) / span, 0), 1) * 65535).rounded())
            }
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
