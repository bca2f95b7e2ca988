// libFuzzer target: decoding any bytes as preset JSON must end in a valid preset or a
// one-line PresetError, never a crash. Built by Tools/fuzz.sh with the GPU-free files of
// VelvetBeauty: Preset.swift, PresetCoding.swift, PresetBuiltIns.swift, ReshapeSettings.swift,
// MakeupSettings.swift, BeautySettings.swift, BeautyError.swift, BuiltInLUT.swift, ColorLUT.swift.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPreset(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    do {
        let preset = try BeautyPreset.decode(Data(bytes: data, count: size), file: "fuzz.json")
        // What decodes must validate and survive a round trip.
        try preset.validate(file: "fuzz.json")
        let again = try BeautyPreset.decode(try preset.encoded(), file: "fuzz.json")
        precondition(again == preset, "round trip changed the preset")
    } catch let error as PresetError {
        precondition(!error.description.contains("\n"), "multi-line error")
    } catch {
        preconditionFailure("unexpected error type: \(error)")
    }
    return 0
}
