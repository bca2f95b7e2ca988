// libFuzzer target: opening and decoding any file through MediaReader must end in a
// frame or an error, whatever FFmpeg returns. Built by Tools/fuzz.sh.
import Foundation

private let scratchPath = NSTemporaryDirectory() + "velvet-fuzz-\(getpid()).bin"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMedia(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard FileManager.default.createFile(atPath: scratchPath, contents: Data(bytes: data, count: size)) else { return 0 }
    // Removed after each input, so a campaign leaves nothing in the temporary folder.
    defer { unlink(scratchPath) }
    guard let reader = try? MediaReader(path: scratchPath) else { return 0 }
    var items = 0
    while items < 64, let item = try? reader.next() {
        if case .video(let frame) = item { _ = reader.exifOrientation(of: frame) }
        items += 1
    }
    return 0
}
