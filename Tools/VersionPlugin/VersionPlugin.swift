import Foundation
import PackagePlugin

/// Build-tool plugin: stamps the `git describe` of the source into the target it is applied
/// to (`BuildStamp.gitDescribe`). Every source file of the package and git's HEAD, index and
/// branch and tag refs are inputs, so a commit, a checkout, a tag or an edit (the `-dirty`
/// mark) stamps it again.
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
        // The branch HEAD names (a commit rewrites it), and the folders of branches and tags
        // (git renames a ref into place, so an added, moved or deleted one changes its folder).
        // Not every ref file: the build was stamped with a list of them, and one deleted later
        // (`git stash pop`, `git branch -d`) failed every build as a missing input.
        if let head = try? String(contentsOf: files[0], encoding: .utf8), head.hasPrefix("ref: ") {
            files.append(common.appendingPathComponent(head.dropFirst("ref: ".count).trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        files += ["refs/heads", "refs/tags"].map { common.appendingPathComponent($0) }
        return files.filter { FileManager.default.fileExists(atPath: $0.path) }
    }
}
