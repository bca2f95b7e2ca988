// libFuzzer target: parsing any text as a .cube LUT must end in a table or a LUTError,
// never a crash or a hang. Built by Tools/fuzz.sh with Sources/VelvetBeauty/ColorLUT.swift
// and Sources/VelvetBeauty/CubeLUTParser.swift (Foundation only, no GPU code).
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCubeLUT(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let lut = try? CubeLUTParser.parse(text, path: "fuzz.cube") {
        // A parsed table is complete and usable.
        precondition(lut.entries.count == lut.size * lut.size * lut.size, "table size mismatch")
        _ = lut.apply(SIMD3<Float>(0.25, 0.5, 0.75))
    }
    return 0
}
