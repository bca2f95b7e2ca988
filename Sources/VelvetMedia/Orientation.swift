import CFFmpeg

/// One of the 8 ways a stored frame is turned or mirrored for display (display matrices
/// of phone videos, EXIF orientation of photos). The pipeline works on the upright image;
/// the writer turns it back and keeps the tag, so players show the same picture.
public struct Orientation: Sendable, Equatable {
    /// Clockwise quarter turns applied to the stored frame for display.
    public var quarterTurns: Int
    /// The stored frame is mirrored horizontally before turning.
    public var mirrored: Bool

    public static let identity = Orientation(quarterTurns: 0, mirrored: false)

    public init(quarterTurns: Int, mirrored: Bool) {
        self.quarterTurns = ((quarterTurns % 4) + 4) % 4
        self.mirrored = mirrored
    }

    /// The stream's display matrix, or upright without one.
    init(stream: UnsafePointer<AVStream>) {
        var matrix = [Int32](repeating: 0, count: 9)
        self = velvet_stream_display_matrix(stream, &matrix) != 0 ? Orientation(displayMatrix: matrix) : .identity
    }

    /// From a display matrix as ffmpeg's autorotation reads it: the rotation rounded to
    /// quarter turns, and the mirror its signs show (a transpose, an anti-transpose, a flip).
    public init(displayMatrix m: [Int32]) {
        var degrees = -av_display_rotation_get(m).rounded()
        if degrees.isNaN { degrees = 0 }
        degrees -= 360 * (degrees / 360 + 0.9 / 360).rounded(.down)
        switch degrees {
        case 89..<91: self.init(quarterTurns: m[3] > 0 ? 3 : 1, mirrored: m[3] > 0)      // cclock_flip (transpose), else clock
        case 269..<271: self.init(quarterTurns: m[3] < 0 ? 1 : 3, mirrored: m[3] < 0)    // clock_flip (transverse), else cclock
        case 179..<181:
            switch (m[0] < 0, m[4] < 0) {
            case (true, true): self.init(quarterTurns: 2, mirrored: false)
            case (true, false): self.init(quarterTurns: 0, mirrored: true)   // hflip
            case (false, true): self.init(quarterTurns: 2, mirrored: true)   // vflip
            default: self = .identity
            }
        default: self = m[4] < 0 ? Orientation(quarterTurns: 2, mirrored: true) : .identity // a vflip reads as no turn
        }
    }

    /// From an EXIF orientation tag (1...8); other values mean upright.
    public init(exif value: Int) {
        switch value {
        case 2: self.init(quarterTurns: 0, mirrored: true)
        case 3: self.init(quarterTurns: 2, mirrored: false)
        case 4: self.init(quarterTurns: 2, mirrored: true)
        case 5: self.init(quarterTurns: 3, mirrored: true) // transpose
        case 6: self.init(quarterTurns: 1, mirrored: false)
        case 7: self.init(quarterTurns: 1, mirrored: true) // transverse
        case 8: self.init(quarterTurns: 3, mirrored: false)
        default: self = .identity
        }
    }

    /// The code the kernels read (video_common.glsl): bit 0 mirror, bits 1-2 quarter turns.
    var kernelCode: Int32 { Int32(quarterTurns << 1 | (mirrored ? 1 : 0)) }

    /// The stored pixel shown at an upright pixel (storedPixel in video_common.glsl).
    func storedPixel(_ upright: (Int, Int), storedWidth: Int, storedHeight: Int) -> (Int, Int) {
        var p = upright
        switch quarterTurns {
        case 1: p = (p.1, storedHeight - 1 - p.0)
        case 2: p = (storedWidth - 1 - p.0, storedHeight - 1 - p.1)
        case 3: p = (storedWidth - 1 - p.1, p.0)
        default: break
        }
        if mirrored { p.0 = storedWidth - 1 - p.0 }
        return p
    }

    public func uprightSize(width: Int, height: Int) -> (width: Int, height: Int) {
        quarterTurns % 2 == 0 ? (width, height) : (height, width)
    }
}
