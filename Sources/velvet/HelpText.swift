/// `velvet help [COMMAND]`, `velvet --help`, `velvet COMMAND --help` / `-h`: the usage text,
/// or one command's section of it, on stdout (exit 0).
enum HelpText {
    static func run(_ arguments: ArgumentParser) throws {
        var arguments = arguments
        let listsCommands = arguments.flag("--commands")
        arguments.ignoreFlags() // `help --json` is the usage
        let name = listsCommands ? nil : arguments.takePositional()
        // `help CMD` wins over the options beside it, as `CMD --help` does (docs/CLI.md).
        if name == nil { try arguments.finish() }
        if listsCommands {
            print(CommandList.all.map(\.name).joined(separator: "\n"))
        } else if let name {
            print(try usage(of: name))
        } else {
            print(VelvetCommand.usage)
        }
    }

    /// The command's lines of `VelvetCommand.usage` (from `  NAME` to the next command at the
    /// same indent), with the options every command shares.
    static func usage(of name: String) throws -> String {
        guard CommandList.named(name) != nil else { throw UsageError("unknown command '\(name)'") }
        let lines = VelvetCommand.usage.split(separator: "\n", omittingEmptySubsequences: false)
        let isCommandLine = { (line: Substring) in line.hasPrefix("  ") && !line.hasPrefix("   ") }
        guard let start = lines.firstIndex(where: { isCommandLine($0) && $0.dropFirst(2).split(separator: " ").first == Substring(name) })
        else { throw UsageError("no help text for '\(name)'") }
        let end = lines[(start + 1)...].firstIndex { isCommandLine($0) || $0.isEmpty } ?? lines.endIndex
        let shared = lines.drop { !$0.hasPrefix("options (") }
        return (["usage: velvet \(name) [options]", ""] + lines[start..<end] + [""] + shared).joined(separator: "\n")
    }
}
