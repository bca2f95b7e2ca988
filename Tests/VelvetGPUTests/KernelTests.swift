import Foundation
import VelvetKernels
import XCTest

/// The kernel build: reflection of embedded kernels (bindings, push blocks), the generated
/// push-block structs, and compiler diagnostics.
final class KernelTests: XCTestCase {
    func testBlurKernelReflection() {
        let kernel = KernelLibrary.gaussianBlur
        XCTAssertEqual(kernel.spirv.first, 0x0723_0203, "SPIR-V magic")
        XCTAssertEqual(kernel.workgroupSize, KernelWorkgroupSize(x: 64, y: 1, z: 1))
        XCTAssertEqual(kernel.bindings.map(\.kind), [.combinedImageSampler, .storageImage])
        XCTAssertEqual(kernel.pushConstantSize, 32)
    }

    /// A `readonly imageBuffer` is a storage texel buffer (the lavapipe NN kernels read
    /// through them), not a storage image; the same kernel with storage buffers keeps them.
    func testImageBuffersReflectAsStorageTexelBuffers() {
        XCTAssertEqual(KernelLibrary.nnConv2dTexels.bindings.map(\.kind),
                       [.storageTexelBuffer, .storageBuffer, .storageTexelBuffer, .storageTexelBuffer, .storageTexelBuffer])
        XCTAssertEqual(KernelLibrary.nnConv2d.bindings.map(\.kind), [.storageBuffer, .storageBuffer, .storageBuffer, .storageBuffer, .storageBuffer])
        XCTAssertEqual(KernelLibrary.nnConv2dTexels.pushConstantMembers, KernelLibrary.nnConv2d.pushConstantMembers)
    }

    /// teeth_whiten.comp declares `ivec2 origin; ivec2 regionSize; int faceCount; float strength; int view;`.
    func testPushBlockReflection() {
        let kernel = KernelLibrary.teethWhiten
        XCTAssertEqual(kernel.pushConstantMembers, [
            KernelPushMember(name: "origin", scalar: .int32, components: 2, offset: 0),
            KernelPushMember(name: "regionSize", scalar: .int32, components: 2, offset: 8),
            KernelPushMember(name: "faceCount", scalar: .int32, components: 1, offset: 16),
            KernelPushMember(name: "strength", scalar: .float, components: 1, offset: 20),
            KernelPushMember(name: "view", scalar: .int32, components: 1, offset: 24),
        ])
        XCTAssertEqual(kernel.pushConstantSize, 28)
        XCTAssertEqual(KernelLibrary.TeethWhitenPush.size, 28)
        XCTAssertEqual(KernelLibrary.gaussianBlur.pushConstantMembers.map(\.offset), [0, 8, 12, 16, 20, 24, 28])
    }

    func testGeneratedPushBlockWritesEachMemberAtItsOffset() {
        let push = KernelLibrary.TeethWhitenPush(origin: SIMD2(3, -4), regionSize: SIMD2(640, 480), faceCount: 5, strength: 0.75, view: 1)
        var bytes = [UInt8](repeating: 0xAA, count: KernelLibrary.TeethWhitenPush.size)
        bytes.withUnsafeMutableBytes { push.write(to: $0) }
        bytes.withUnsafeBytes { raw in
            XCTAssertEqual((0..<5).map { raw.load(fromByteOffset: $0 * 4, as: Int32.self) } + [raw.load(fromByteOffset: 24, as: Int32.self)],
                           [3, -4, 640, 480, 5, 1])
            XCTAssertEqual(raw.load(fromByteOffset: 20, as: Float.self), 0.75)
        }
    }

    /// std430 packing the host must not guess: a float right after a vec3, a vec4 rounded up
    /// to 16; the struct and its stores follow the offsets the SPIR-V gives.
    func testCompilerEmitsPushStructAtReflectedOffsets() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("velvet-kc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try """
        #version 450
        layout(local_size_x = 1) in;
        layout(std430, binding = 0) buffer Out { float values[]; } result;
        layout(push_constant) uniform Parameters { vec3 colour; float weight; ivec2 size; uint seed; vec4 range; } parameters;
        void main() { result.values[0] = parameters.colour.x + parameters.weight + float(parameters.size.x + int(parameters.seed)) + parameters.range.w; }

        """.write(to: directory.appendingPathComponent("tiny_probe.comp"), atomically: true, encoding: .utf8)
        let (status, output) = try runCompiler(directory.appendingPathComponent("tiny_probe.comp"), directory)
        XCTAssertEqual(status, 0, output)
        let swift = try String(contentsOf: directory.appendingPathComponent("out.swift"), encoding: .utf8)
        for expected in [
            "KernelPushMember(name: \"colour\", scalar: .float, components: 3, offset: 0)",
            "KernelPushMember(name: \"weight\", scalar: .float, components: 1, offset: 12)",
            "KernelPushMember(name: \"size\", scalar: .int32, components: 2, offset: 16)",
            "KernelPushMember(name: \"seed\", scalar: .uint32, components: 1, offset: 24)",
            "KernelPushMember(name: \"range\", scalar: .float, components: 4, offset: 32)",
            "public struct TinyProbePush: KernelPushBlock", "public static let size = 48",
            "public var `colour`: SIMD3<Float>", "public var `seed`: UInt32",
            "bytes.storeBytes(of: `colour`[2], toByteOffset: 8, as: Float.self)",
            "bytes.storeBytes(of: `weight`, toByteOffset: 12, as: Float.self)",
            "bytes.storeBytes(of: `range`[3], toByteOffset: 44, as: Float.self)",
        ] {
            XCTAssertTrue(swift.contains(expected), "missing \(expected)")
        }
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
