// KernelCompiler: one GLSL compute kernel -> validated SPIR-V -> a generated Swift file.
// Usage: KernelCompiler INPUT.comp OUTPUT.swift [--include DIR]...
// Runs at build time from KernelPlugin; errors print as `file.comp:LINE: error: ...`
// so they read like compiler diagnostics, and the tool exits non-zero.
import Foundation

func runKernelCompiler(_ arguments: [String]) -> Int32 {
    var positional: [String] = []
    var includeDirectories: [String] = []
    var index = 0
    while index < arguments.count {
        let argument = arguments[index]
        if argument == "--include", index + 1 < arguments.count {
            includeDirectories.append(arguments[index + 1])
            index += 2
        } else {
            positional.append(argument)
            index += 1
        }
    }
    guard positional.count == 2 else {
        printError("usage: KernelCompiler INPUT.comp OUTPUT.swift [--include DIR]...")
        return 2
    }
    let inputPath = positional[0]
    let outputPath = positional[1]
    do {
        let source = try IncludeResolver(searchDirectories: includeDirectories).expand(path: inputPath)
        let words = try GlslangCompiler.compile(source)
        try SPIRVValidator.validate(words, path: inputPath)
        let reflection = try SPIRVReflection(words: words)
        let kernelName = URL(fileURLWithPath: inputPath).deletingPathExtension().lastPathComponent
        let swift = SwiftEmitter.emit(kernelName: kernelName, words: words, reflection: reflection)
        try Data(swift.utf8).write(to: URL(fileURLWithPath: outputPath), options: .atomic)
        return 0
    } catch let error as KernelCompilerError {
        for line in error.diagnostics { printError(line) }
        return 1
    } catch {
        printError("\(inputPath):1: error: \(error)")
        return 1
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// Diagnostics already formatted as `file:line: error: message`.
struct KernelCompilerError: Error {
    var diagnostics: [String]
}

exit(runKernelCompiler(Array(CommandLine.arguments.dropFirst())))
