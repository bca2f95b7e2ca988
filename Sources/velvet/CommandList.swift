/// Every `velvet` command by name, with what runs it: the one place a command is declared.
/// Dispatch, `velvet help --commands` (what the tests check `--help` of) and each command's
/// help section (`HelpText`, cut from `VelvetCommand.usage`) all come from here.
enum CommandList {
    static let all: [(name: String, run: @Sendable (ArgumentParser) throws -> Void)] = [
        ("demo", DemoCommand.run),
        ("render", RenderCommand.run),
        ("compare", CompareCommand.run),
        ("batch", BatchCommand.run),
        ("analyze", AnalyzeCommand.run),
        ("presets", PresetsCommand.run),
        ("luts", LUTsCommand.run),
        ("devices", DevicesCommand.run),
        ("bench", BenchCommand.run),
        ("version", VersionCommand.run),
        ("help", HelpText.run),
    ]

    static func named(_ name: String) -> ((ArgumentParser) throws -> Void)? { all.first { $0.name == name }?.run }
}
