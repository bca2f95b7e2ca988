import Foundation
import PackagePlugin

/// Build-tool plugin: one KernelCompiler command per `*.comp` in the target's folder.
/// Every shared `*.glsl` is an input of every command, so editing a helper rebuilds its users.
@main
struct KernelPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        let directory = target.directoryURL
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let kernels = files.filter { $0.pathExtension == "comp" }
        let helpers = files.filter { $0.pathExtension == "glsl" }
        let compiler = try context.tool(named: "KernelCompiler").url
        let outputDirectory = context.pluginWorkDirectoryURL.appendingPathComponent("GeneratedKernels")
        return kernels.map { kernel in
            let name = kernel.deletingPathExtension().lastPathComponent
            let output = outputDirectory.appendingPathComponent("\(name).spirv.swift")
            return .buildCommand(
                displayName: "Compiling kernel \(kernel.lastPathComponent)",
                executable: compiler,
                arguments: [kernel.path, output.path, "--include", directory.path],
                inputFiles: [kernel] + helpers,
                outputFiles: [output]
            )
        }
    }
}
