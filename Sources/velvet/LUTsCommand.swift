import Foundation
import VelvetBeauty

/// `velvet luts list | export DIR`: the colour grades Velvet ships (defined by formula in
/// BuiltInLUT), written as .cube files for editors and Resolve. Tools/make-luts.sh runs it.
enum LUTsCommand {
    static func run(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        switch arguments.takePositional() {
        case "list":
            try arguments.finish()
            BuiltInLUT.allCases.forEach { print($0.rawValue) }
        case "export":
            guard let directory = arguments.takePositional() else { throw UsageError("luts export needs a DIR") }
            try arguments.finish()
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for builtIn in BuiltInLUT.allCases {
                let path = "\(directory)/\(builtIn.rawValue).cube"
                try Data(builtIn.lut.cubeText.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
                print(path)
            }
        default:
            throw UsageError("luts takes list or export DIR")
        }
    }
}
