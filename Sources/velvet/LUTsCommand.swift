import Foundation
import VelvetBeauty
import VelvetFiles

/// `velvet luts list | export DIR [-y|-n]`: the colour grades Velvet ships (defined by formula in
/// BuiltInLUT), written as .cube files for editors and Resolve. Tools/make-luts.sh runs it.
enum LUTsCommand {
    static func run(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        switch arguments.takePositional() {
        case "list":
            try arguments.finish()
            BuiltInLUT.allCases.forEach { print($0.rawValue) }
        case "export":
            guard let directory = arguments.takePositional(), !directory.isEmpty else { throw UsageError("luts export needs a DIR") }
            try CommandFiles.refuseStandardStream(directory, option: "luts export DIR")
            let policy = try OverwritePolicy.parse(&arguments)
            try arguments.finish()
            try Directory.create(directory)
            let paths = BuiltInLUT.allCases.map { (lut: $0, path: "\(directory)/\($0.rawValue).cube") }
            var files = CommandFiles(policy: policy)
            paths.forEach { files.output($0.path, "LUT file") }
            try files.check()
            for (builtIn, path) in paths {
                try OutputFile.write(Data(builtIn.lut.cubeText.utf8), to: path, policy: policy.commit)
                print(path)
            }
        default:
            throw UsageError("luts takes list or export DIR")
        }
    }
}
