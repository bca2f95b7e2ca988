/// Whether a JPEG picture's data reaches its end-of-image marker. FFmpeg decodes a cut-short
/// JPEG without a word and fills the rows it never got (a green picture below the cut), so a
/// JPEG picture is walked here from its start: segment by segment (each states its length),
/// through each scan's coded data (where an FF byte is stuffed, FF 00, or a restart marker,
/// FF D0...D7, so any other marker ends the scan), until the end-of-image marker (FF D9).
/// Whatever follows it (a phone's trailer, a second picture) is not read.
enum JPEGEnd {
    static func isReached(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return true } // not a JPEG's start: FFmpeg judges it
        var cursor = 2
        while cursor + 1 < bytes.count {
            guard bytes[cursor] == 0xFF else { return true } // not a marker where one must be: damage FFmpeg reports itself
            let marker = bytes[cursor + 1]
            if marker == 0xFF { cursor += 1; continue } // fill bytes before a marker
            if marker == 0xD9 { return true }
            if marker == 0x01 || (0xD0...0xD7).contains(marker) { cursor += 2; continue } // markers without a length
            guard cursor + 3 < bytes.count else { return false }
            cursor += 2 + (Int(bytes[cursor + 2]) << 8 | Int(bytes[cursor + 3]))
            guard marker == 0xDA else { continue }
            // The scan's coded data, up to the next marker that is not a stuffed byte or a restart.
            while cursor + 1 < bytes.count {
                if bytes[cursor] == 0xFF, bytes[cursor + 1] != 0x00, !(0xD0...0xD7).contains(bytes[cursor + 1]) { break }
                cursor += 1
            }
        }
        return false
    }
}
