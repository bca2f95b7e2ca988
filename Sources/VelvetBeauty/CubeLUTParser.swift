import Foundation

/// Reads Adobe/Resolve `.cube` 3D LUTs: `TITLE`, `LUT_3D_SIZE` (2...65), optional
/// `DOMAIN_MIN`/`DOMAIN_MAX`, then size^3 lines of three numbers, red fastest.
/// Comments (#) and blank lines are skipped. Anything else is an error naming the line.
public enum CubeLUTParser {
    /// Files larger than this are refused before reading (a 65^3 table is about 7 MB).
    static let maxFileBytes = 64 << 20

    public static func load(_ path: String) throws -> ColorLUT {
        // Through a handle, so a FIFO reads as a file does; a folder cannot be read at all.
        guard let handle = FileHandle(forReadingAtPath: path), let data = try? handle.read(upToCount: maxFileBytes + 1) ?? Data() else {
            throw LUTError(path: path, line: nil, reason: "cannot read the file")
        }
        // One byte past the limit is enough to refuse a larger file (or a FIFO that never ends).
        guard data.count <= maxFileBytes else { throw LUTError(path: path, line: nil, reason: "file too large for a LUT (over \(maxFileBytes) bytes)") }
        guard let text = String(data: data, encoding: .utf8) else { throw LUTError(path: path, line: nil, reason: "not a UTF-8 text file") }
        return try parse(text, path: path)
    }

    public static func parse(_ text: String, path: String = "<memory>") throws -> ColorLUT {
        var lut = ColorLUT(size: 0, entries: [])
        var expected = 0
        for (offset, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let lineNumber = offset + 1
            func fail(_ reason: String) -> LUTError { LUTError(path: path, line: lineNumber, reason: reason) }
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first?
                .trimmingCharacters(in: .whitespaces) ?? ""
            guard !line.isEmpty else { continue }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            let keyword = String(fields[0])
            switch keyword {
            case "TITLE":
                lut.title = line.dropFirst("TITLE".count).trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            case "LUT_3D_SIZE":
                guard lut.size == 0 else { throw fail("LUT_3D_SIZE given twice") }
                guard fields.count == 2, let size = Int(fields[1]), (2...ColorLUT.maxSize).contains(size) else {
                    throw fail("LUT_3D_SIZE must be an integer in 2...\(ColorLUT.maxSize)")
                }
                lut.size = size
                expected = size * size * size
                lut.entries.reserveCapacity(expected)
            case "LUT_1D_SIZE":
                throw fail("1D LUTs are not supported; use a 3D LUT (LUT_3D_SIZE)")
            case "DOMAIN_MIN", "DOMAIN_MAX":
                let values = try numbers(fields.dropFirst(), fail)
                if keyword == "DOMAIN_MIN" { lut.domainMin = values } else { lut.domainMax = values }
            case "LUT_3D_INPUT_RANGE":
                let values = try numbers(fields.dropFirst(), fail, count: 2)
                lut.domainMin = SIMD3(repeating: values.x)
                lut.domainMax = SIMD3(repeating: values.y)
            default:
                guard Float(keyword) != nil else {
                    throw fail("unknown keyword '\(keyword)'")
                }
                guard lut.size > 0 else { throw fail("table data before LUT_3D_SIZE") }
                guard lut.entries.count < expected else { throw fail("more than \(expected) table entries") }
                lut.entries.append(try numbers(fields[...], fail))
            }
        }
        guard lut.size > 0 else { throw LUTError(path: path, line: nil, reason: "no LUT_3D_SIZE line: not a 3D .cube LUT") }
        guard lut.entries.count == expected else {
            throw LUTError(path: path, line: nil, reason: "\(lut.entries.count) table entries, expected \(expected) for size \(lut.size)")
        }
        guard all(lut.domainMax .> lut.domainMin) else {
            throw LUTError(path: path, line: nil, reason: "DOMAIN_MAX must exceed DOMAIN_MIN in every channel")
        }
        return lut
    }

    /// Three finite numbers (or `count` of them, returned in x, y).
    private static func numbers(_ fields: ArraySlice<Substring>, _ fail: (String) -> LUTError, count: Int = 3) throws -> SIMD3<Float> {
        guard fields.count == count else { throw fail("expected \(count) numbers, found \(fields.count)") }
        var values = SIMD3<Float>.zero
        for (index, field) in fields.enumerated() {
            guard let value = Float(field), value.isFinite else { throw fail("'\(field)' is not a number") }
            values[index] = value
        }
        return values
    }
}
