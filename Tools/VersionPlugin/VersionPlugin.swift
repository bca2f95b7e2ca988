import Foundation
import PackagePlugin

/// Build-tool plugin: stamps the `git describe` of the source into the target it is applied
/// to (`BuildStamp.gitDescribe`). Every source file of the package and git's HEAD, index and
/// refs are inputs, so a commit, a checkout or an edit (the `-dirty` mark) stamps it again.
@main
struct VersionPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        let package = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("BuildStamp.swift")
        let sources = context.package.targets.flatMap { ($0 as? SourceModuleTarget)?.sourceFiles.map(\.url) ?? [] }
        return [.buildCommand(displayName: "Stamping the build's git describe",
                              executable: try context.tool(named: "VersionStamp").url,
                              arguments: [package.path, output.path],
                              inputFiles: sources + Self.gitFiles(package), outputFiles: [output])]
    }

    /// HEAD, the index and the refs of the checkout (a worktree's `.git` is a file naming its own folder).
    private static func gitFiles(_ package: URL) -> [URL] {
        let dotGit = package.appendingPathComponent(".git")
        var gitDirectory = dotGit
        if let text = try? String(contentsOf: dotGit, encoding: .utf8), text.hasPrefix("gitdir:") {
            let path = text.dropFirst("gitdir:".count).trimmingCharacters(in: .whitespacesAndNewlines)
            gitDirectory = URL(fileURLWithPath: path, relativeTo: package)
        }
        var common = gitDirectory
        if let text = try? String(contentsOf: gitDirectory.appendingPathComponent("commondir"), encoding: .utf8) {
            common = URL(fileURLWithPath: text.trimmingCharacters(in: .whitespacesAndNewlines), relativeTo: gitDirectory)
        }
        var files = [gitDirectory.appendingPathComponent("HEAD"), gitDirectory.appendingPathComponent("index"),
                     common.appendingPathComponent("packed-refs")]
        let refs = common.appendingPathComponent("refs")
        if let walker = FileManager.default.enumerator(at: refs, includingPropertiesForKeys: nil) {
            files += walker.compactMap { $0 as? URL }.filter { !$0.hasDirectoryPath }
        }
        return files.filter { FileManager.default.fileExists(atPath: $0.path) }
    }
}
