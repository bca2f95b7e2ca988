import Foundation
import VelvetGPU

/// The `velvet` command line: parses the subcommand and maps errors to exit codes.
/// Exit codes: 0 success, 1 runtime error (message on stderr), 2 usage error.
enum VelvetCommand {
    static let usage = """
    usage: velvet <command> [options]

    commands:
      devices                 list Vulkan devices and the one Velvet would use
      bench blur [options]    time the Gaussian blur kernel on the current device

    options (all commands):
      --device INDEX|NAME     pick a Vulkan device (also VELVET_DEVICE)
    """

    static func run(_ arguments: [String]) -> Int32 {
        guard let command = arguments.first else {
            printError(usage)
            return 2
        }
        let rest = Array(arguments.dropFirst())
        do {
            switch command {
            case "devices": try DevicesCommand.run(try ArgumentParser(rest))
            case "bench": try BenchCommand.run(try ArgumentParser(rest))
            case "help", "--help", "-h": print(usage)
            default: throw UsageError("unknown command '\(command)'")
            }
            return 0
        } catch let error as UsageError {
            printError("velvet: \(error.message)\n\n\(usage)")
            return 2
        } catch {
            printError("velvet: error: \(error)")
            return 1
        }
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
