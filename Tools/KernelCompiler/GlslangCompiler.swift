import CGlslang
import Foundation

/// GLSL -> SPIR-V through glslang's C API, targeting Vulkan 1.2 / SPIR-V 1.5.
enum GlslangCompiler {
    static func compile(_ source: ExpandedSource) throws -> [UInt32] {
        guard glslang_initialize_process() != 0 else {
            throw KernelCompilerError(diagnostics: ["\(source.origin(ofLine: 1).path):1: error: glslang failed to initialise"])
        }
        defer { glslang_finalize_process() }

        return try source.text.withCString { code -> [UInt32] in
            var input = glslang_input_t()
            input.language = GLSLANG_SOURCE_GLSL
            input.stage = GLSLANG_STAGE_COMPUTE
            input.client = GLSLANG_CLIENT_VULKAN
            input.client_version = GLSLANG_TARGET_VULKAN_1_2
            input.target_language = GLSLANG_TARGET_SPV
            input.target_language_version = GLSLANG_TARGET_SPV_1_5
            input.code = code
            input.default_version = 450
            input.default_profile = GLSLANG_NO_PROFILE
            input.force_default_version_and_profile = 0
            input.forward_compatible = 0
            input.messages = GLSLANG_MSG_DEFAULT_BIT
            input.resource = glslang_default_resource()

            guard let shader = glslang_shader_create(&input) else {
                throw KernelCompilerError(diagnostics: ["\(source.origin(ofLine: 1).path):1: error: glslang could not create a shader"])
            }
            defer { glslang_shader_delete(shader) }
            guard glslang_shader_preprocess(shader, &input) != 0, glslang_shader_parse(shader, &input) != 0 else {
                throw KernelCompilerError(diagnostics: diagnostics(from: glslang_shader_get_info_log(shader), source: source))
            }
            guard let program = glslang_program_create() else {
                throw KernelCompilerError(diagnostics: ["\(source.origin(ofLine: 1).path):1: error: glslang could not create a program"])
            }
            defer { glslang_program_delete(program) }
            glslang_program_add_shader(program, shader)
            let messages = Int32(bitPattern: GLSLANG_MSG_SPV_RULES_BIT.rawValue | GLSLANG_MSG_VULKAN_RULES_BIT.rawValue)
            guard glslang_program_link(program, messages) != 0 else {
                throw KernelCompilerError(diagnostics: diagnostics(from: glslang_program_get_info_log(program), source: source))
            }
            glslang_program_SPIRV_generate(program, GLSLANG_STAGE_COMPUTE)
            let count = glslang_program_SPIRV_get_size(program)
            var words = [UInt32](repeating: 0, count: count)
            words.withUnsafeMutableBufferPointer { glslang_program_SPIRV_get(program, $0.baseAddress) }
            return words
        }
    }

    /// glslang writes `ERROR: 0:LINE: message`; rewrite each as `file:LINE: error: message`
    /// with LINE mapped back through the include expansion.
    static func diagnostics(from log: UnsafePointer<CChar>?, source: ExpandedSource) -> [String] {
        let text = log.map { String(cString: $0) } ?? ""
        var result: [String] = []
        for line in text.split(separator: "\n") {
            for (prefix, kind) in [("ERROR: ", "error"), ("WARNING: ", "warning")] where line.hasPrefix(prefix) {
                let body = line.dropFirst(prefix.count)
                let parts = body.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
                if parts.count == 3, let expandedLine = Int(parts[1]) {
                    let origin = source.origin(ofLine: expandedLine)
                    result.append("\(origin.path):\(origin.line): \(kind):\(parts[2])")
                } else if !body.contains("compilation terminated") && !body.contains("compilation errors") {
                    result.append("\(source.origin(ofLine: 1).path):1: \(kind): \(body)")
                }
            }
        }
        if !result.contains(where: { $0.contains(": error:") }) {
            result.append("\(source.origin(ofLine: 1).path):1: error: glslang failed: \(text)")
        }
        return result
    }
}

/// SPIR-V validation of the compiled module with SPIRV-Tools, for the Vulkan 1.2 environment.
enum SPIRVValidator {
    static func validate(_ words: [UInt32], path: String) throws {
        guard let context = spvContextCreate(SPV_ENV_VULKAN_1_2) else {
            throw KernelCompilerError(diagnostics: ["\(path):1: error: SPIRV-Tools context failed"])
        }
        defer { spvContextDestroy(context) }
        var diagnostic: spv_diagnostic? = nil
        let status = words.withUnsafeBufferPointer { buffer -> spv_result_t in
            var binary = spv_const_binary_t(code: buffer.baseAddress, wordCount: buffer.count)
            return spvValidate(context, &binary, &diagnostic)
        }
        defer { spvDiagnosticDestroy(diagnostic) }
        guard status == SPV_SUCCESS else {
            let message = diagnostic.flatMap { $0.pointee.error.map { String(cString: $0) } } ?? "status \(status.rawValue)"
            throw KernelCompilerError(diagnostics: ["\(path):1: error: SPIR-V validation failed: \(message)"])
        }
    }
}
