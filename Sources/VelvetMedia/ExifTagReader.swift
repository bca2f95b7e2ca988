import Foundation

/// The EXIF orientation tag of a PNG (its eXIf chunk) or a TIFF (its first IFD), read from the
/// file itself: FFmpeg 5.1 exports the tag for JPEG and WebP but not for these two.
enum ExifTagReader {
    private static let orientationTag: UInt16 = 0x0112
    private static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    /// An eXIf chunk larger than this is not believed (EXIF in JPEG is at most 64 KiB).
    private static let largestExifChunk = 1 << 20

    /// The tag's value (1...8 meaningful), or nil when the file is not a regular PNG or TIFF
    /// file or carries no tag. Pipes and devices are never read: the decoder owns their bytes.
    static func orientation(path: String) -> Int? {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
              let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let file: Bytes = { offset, count in
            guard (try? handle.seek(toOffset: UInt64(offset))) != nil, let data = try? handle.read(upToCount: count),
                  data.count == count else { return nil }
            return [UInt8](data)
        }
        if file(0, 8) == pngSignature {
            return pngExif(file).flatMap { exif in orientation(tiff: { slice(exif, $0, $1) }) }
        }
        return orientation(tiff: file)
    }

    /// Reads `count` bytes at an offset; nil past the end.
    typealias Bytes = (_ offset: Int, _ count: Int) -> [UInt8]?

    private static func slice(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> [UInt8]? {
        guard offset >= 0, count >= 0, offset + count <= bytes.count else { return nil }
        return Array(bytes[offset..<(offset + count)])
    }

    /// The eXIf chunk's data, walking chunk headers (image data is skipped, not read).
    private static func pngExif(_ file: Bytes) -> [UInt8]? {
        var offset = pngSignature.count
        while let header = file(offset, 8) {
            let length = header.prefix(4).reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: header.suffix(4), as: UTF8.self)
            if type == "IEND" { return nil }
            if type == "eXIf" {
                guard length <= largestExifChunk, let data = file(offset + 8, length) else { return nil }
                // Some writers keep JPEG's "Exif\0\0" marker in front of the TIFF header.
                return data.starts(with: Array("Exif\0\0".utf8)) ? Array(data.dropFirst(6)) : data
            }
            offset += 12 + length
        }
        return nil
    }

    /// The orientation entry of the first IFD of TIFF-structured bytes (EXIF's own layout).
    static func orientation(tiff: Bytes) -> Int? {
        guard let header = tiff(0, 8) else { return nil }
        let little: Bool
        switch (header[0], header[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func number(_ bytes: ArraySlice<UInt8>) -> Int {
            (little ? Array(bytes.reversed()) : Array(bytes)).reduce(0) { $0 << 8 | Int($1) }
        }
        guard number(header[2..<4]) == 42 else { return nil }
        let directory = number(header[4..<8])
        guard let countBytes = tiff(directory, 2), let entries = tiff(directory + 2, 12 * number(countBytes[...])) else {
            return nil
        }
        for start in stride(from: 0, to: entries.count, by: 12) {
            let entry = entries[start..<(start + 12)]
            let tag = number(entry.prefix(2)), type = number(entry.dropFirst(2).prefix(2))
            // SHORT (3), one value, kept in the first two bytes of the value field.
            if tag == Int(orientationTag), type == 3, number(entry.dropFirst(4).prefix(4)) == 1 {
                return number(entry.dropFirst(8).prefix(2))
            }
        }
        return nil
    }
}
