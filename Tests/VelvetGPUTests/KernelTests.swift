import Foundation
import VelvetKernels
import XCTest

/// The kernel build: reflection of an embedded kernel, and compiler diagnostics.
final class KernelTests: XCTestCase {
    func testBlurKernelReflection() {
        let kernel = KernelLibrary.gaussianBlur
        XCTAssertEqual(kernel.spirv.first, 0x0723_0203, "SPIR-V magic")
        XCTAssertEqual(kernel.workgroupSize, KernelWorkgroupSize(x: 64, y: 1, z: 1))
        XCTAssertEqual(kernel.bindings.map(\.kind), [.combinedImageSampler, .storageImage])
        XCTAssertEqual(kernel.pushConstantSize, 32)
    }

    func testErrorInIncludedFileIsReportedAtItsLine() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("velvet-kc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "float helper(float x) {\n    return x * 2.0;\n    undeclaredThing += 1;\n}\n"
            .write(to: directory.appendingPathComponent("helper.glsl"), atomically: true, encoding: .utf8)
        try "#version 450\n#include \"helper.glsl\"\nlayout(local_size_x = 1) in;\nvoid main() { helper(1.0); }\n"
            .write(to: directory.appendingPathComponent("broken.comp"), atomically: true, encoding: .utf8)
        let (status, output) = try runCompiler(directory.appendingPathComponent("broken.comp"), directory)
        XCTAssertNotEqual(status, 0)
        XCTAssertTrue(output.contains("helper.glsl:3: error:"), output)
    }

    func testErrorInKernelIsReportedAtItsLine() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("velvet-kc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {\n  int x = 1\n}\n"
            .write(to: directory.appendingPathComponent("typo.comp"), atomically: true, encoding: .utf8)
        let (status, output) = try runCompiler(directory.appendingPathComponent("typo.comp"), directory)
        XCTAssertNotEqual(status, 0)
        XCTAssertTrue(output.contains("typo.comp:5: error:"), output)
    }

    private func runCompiler(_ input: URL, _ directory: URL) throws -> (Int32, String) {
        let products = Bundle.main.bundleURL.deletingLastPathComponent()
        let candidates = [products.appendingPathComponent("KernelCompiler"), Bundle.main.bundleURL.appendingPathComponent("KernelCompiler")]
        guard let tool = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            XCTFail("KernelCompiler not built next to the tests (looked in \(candidates.map(\.path)))")
            return (0, "")
        }
        let process = Process()
        process.executableURL = tool
        process.arguments = [input.path, directory.appendingPathComponent("out.swift").path]
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }
}
