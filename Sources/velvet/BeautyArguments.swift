import Foundation
import VelvetBeauty
import VelvetFace
import VelvetPipeline

/// The render options a user sets on the command line (shared by render and compare).
enum BeautyArguments {
    static let help = """
          --smoothing bilateral|freqsep   skin smoothing method (default freqsep)
          --strength X        skin smoothing strength, 0-1 (default 1; 0 turns smoothing off)
          --detail X          frequency separation: fine texture kept, 0-1 (default 1)
          --spots X           spot removal strength, 0-1 (default 0.7)
          --sharpen X         global sharpen after the composite, 0-1 (default 0)
          --lut NAME|FILE     colour grade: gentle-brighten, warm, cool, soft-matte, or a .cube / 512x512 .png LUT
          --lut-strength X    0-1 (default 1)
          --lut-on skin|frame through the skin mask (default) or over the whole frame
          --detector short|full|auto   face detector (default auto)
          --max-faces N       faces per frame, 1-16 (default 4)
          --debug-view mask|landmarks  render the blend weight or the tracked mesh instead
          --no-effects        decode -> encode through the GPU with nothing applied
    """

    static func parse(_ arguments: inout ArgumentParser, loadLUT: (String) throws -> ColorLUT) throws -> BeautyOptions? {
        if arguments.flag("--no-effects") { return nil }
        var options = BeautyOptions()
        if let method = arguments.value("--smoothing") {
            switch method {
            case "bilateral": options.skin.smoothing = .bilateral
            case "freqsep", "frequency-separation": options.skin.smoothing = .frequencySeparation
            default: throw UsageError("--smoothing takes bilateral or freqsep")
            }
        }
        options.skin.strength = try arguments.float("--strength", default: options.skin.strength, range: 0...1)
        options.skin.detail = try arguments.float("--detail", default: options.skin.detail, range: 0...1)
        options.skin.spotRemoval = try arguments.float("--spots", default: options.skin.spotRemoval, range: 0...1)
        options.skin.sharpen = try arguments.float("--sharpen", default: options.skin.sharpen, range: 0...1)
        if let lut = arguments.value("--lut") {
            let strength = try arguments.float("--lut-strength", default: 1, range: 0...1)
            let target = arguments.value("--lut-on") ?? "skin"
            guard target == "skin" || target == "frame" else { throw UsageError("--lut-on takes skin or frame") }
            let table = try BuiltInLUT(rawValue: lut)?.lut ?? loadLUT(lut)
            options.grade = BeautyOptions.Grade(lut: table, strength: strength, throughSkinMask: target == "skin")
        }
        if let detector = arguments.value("--detector") {
            guard let choice = DetectorChoice(rawValue: detector) else { throw UsageError("--detector takes short, full or auto") }
            options.detector = choice
        }
        options.maxFaces = try arguments.int("--max-faces", default: options.maxFaces, range: 1...16)
        if let view = arguments.value("--debug-view") {
            guard let debug = BeautyOptions.DebugView(rawValue: view) else { throw UsageError("--debug-view takes mask or landmarks") }
            options.debugView = debug
        }
        return options
    }
}
