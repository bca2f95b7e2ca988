import Foundation
import VelvetTestSupport
import XCTest
@testable import VelvetNN

/// A model file is untrusted input: every malformed file must throw a
/// `TFLiteError`, never trap. (A trap here would kill the test process.)
final class MalformedInputTests: XCTestCase {
    func testEmptyFile() {
        XCTAssertThrowsError(try TFLiteModel(bytes: [])) { error in
            XCTAssertEqual((error as? TFLiteError)?.reason, .notTFLite("file is empty"))
        }
    }

    func testMissingIdentifier() throws {
        var bytes = try ModelFixtures.bytes("face_landmark")
        bytes[4] = UInt8(ascii: "X")
        XCTAssertThrowsError(try TFLiteModel(bytes: bytes, path: "/tmp/m.tflite")) { error in
            XCTAssertEqual("\(error)", "/tmp/m.tflite: not a TFLite model (missing TFL3 identifier)")
        }
    }

    func testUnreadableFileNamesThePath() {
        let url = URL(fileURLWithPath: "/nonexistent-dir/model.tflite")
        XCTAssertThrowsError(try TFLiteModel(contentsOf: url)) { error in
            let e = error as? TFLiteError
            XCTAssertEqual(e?.path, url.path)
            XCTAssertEqual(e?.description, "/nonexistent-dir/model.tflite: cannot read model file: no such file")
        }
    }

    func testRandomBytesThrow() {
        var rng = SeededGenerator(state: 1)
        for i in 0..<300 {
            var bytes = (0..<Int(rng.next() % 4096)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            // Half of them pass the identifier check, so the walk itself is exercised.
            if i % 2 == 0, bytes.count >= 8 { bytes.replaceSubrange(4..<8, with: Array("TFL3".utf8)) }
            XCTAssertThrowsError(try TFLiteModel(bytes: bytes), "random buffer \(i)")
        }
    }

    /// MediaPipe appends a zip archive after the flatbuffer (empty for the
    /// detectors and mesh, holding labels.txt for the selfie models); cutting
    /// into it leaves a valid model, so cuts are made within the flatbuffer.
    func testTruncatedModelsThrow() throws {
        for name in ModelFixtures.names {
            let bytes = try ModelFixtures.bytes(name)
            let end = Self.flatbufferEnd(bytes)
            XCTAssertLessThan(end, bytes.count, "\(name): expected a zip appendix")
            // 180 cuts spread over the flatbuffer plus its last 20 bytes one by one.
            var cuts = (0..<180).map { $0 * end / 180 }
            cuts += (1...20).map { end - $0 }
            for cut in cuts {
                XCTAssertThrowsError(try TFLiteModel(bytes: Array(bytes[..<cut])), "\(name) cut at \(cut)") { error in
                    XCTAssertTrue(error is TFLiteError, "\(name) cut at \(cut): \(error)")
                }
            }
        }
    }

    /// Random byte corruption. Bytes inside weight data are valid whatever
    /// their value, so corruption is aimed at the flatbuffer structure (every
    /// byte outside constant buffers); a mutated file either loads or throws.
    func testCorruptedModelsNeverCrash() throws {
        var rng = SeededGenerator(state: 42)
        var thrown = 0, total = 0
        for name in ModelFixtures.names {
            let bytes = try ModelFixtures.bytes(name)
            let structure = try Self.structureOffsets(TFLiteModel(bytes: bytes), size: bytes.count)
            for _ in 0..<100 {
                var mutated = bytes
                for _ in 0..<(1 + Int(rng.next() % 3)) {
                    let position = structure[Int(rng.next() % UInt64(structure.count))]
                    mutated[position] = Self.interestingByte(&rng)
                }
                total += 1
                do {
                    _ = try TFLiteGraph(model: TFLiteModel(bytes: mutated))
                } catch {
                    thrown += 1
                    XCTAssertFalse("\(error)".isEmpty)
                }
            }
        }
        // Most structural corruptions are detected; the rest hit fields whose
        // every value is legal (names, unused options).
        XCTAssertGreaterThan(thrown, total / 4, "only \(thrown) of \(total) corruptions were detected")
        print("corruption: \(thrown) of \(total) mutated models were rejected, the rest loaded")
    }

    // MARK: Targeted forgeries

    func testRootOffsetPastEnd() throws {
        var bytes = try ModelFixtures.bytes("face_detection_short_range")
        Self.patch(&bytes, at: 0, UInt32(0xFFFF_FF00))
        assertThrows(bytes, truncated: "root table")
    }

    func testHugeVectorCount() throws {
        var bytes = try ModelFixtures.bytes("face_detection_short_range")
        let tensors = try Self.subgraph(bytes).vector(0, elementSize: 4, what: "tensors")!
        Self.patch(&bytes, at: tensors.start - 4, UInt32(0x7FFF_FFFF))
        assertThrows(bytes, truncated: "claims 2147483647 elements")
    }

    func testWrongSchemaVersion() throws {
        var bytes = try ModelFixtures.bytes("face_landmark")
        let version = try XCTUnwrap(try FlatBufferReader(bytes: bytes).rootTable().fieldPosition(0, size: 4))
        Self.patch(&bytes, at: version, UInt32(2))
        XCTAssertThrowsError(try TFLiteModel(bytes: bytes)) { error in
            XCTAssertEqual((error as? TFLiteError)?.reason, .unsupported("schema version 2; only version 3 is supported"))
        }
    }

    func testNegativeDimension() throws {
        var bytes = try ModelFixtures.bytes("face_landmark")
        let tensor = try Self.subgraph(bytes).vector(0, elementSize: 4, what: "")!.table(at: 0, what: "")
        let shape = try XCTUnwrap(try tensor.vector(0, elementSize: 4, what: ""))
        Self.patch(&bytes, at: shape.start, Int32(-5))
        assertThrows(bytes, malformed: "negative dimension")
    }

    func testConstantDataShorterThanShape() throws {
        var bytes = try ModelFixtures.bytes("face_landmark")
        let model = try TFLiteModel(bytes: bytes)
        let constant = try XCTUnwrap(model.tensors.first { $0.isConstant })
        // The buffer's length word sits just before its data.
        Self.patch(&bytes, at: constant.data!.startIndex - 4, UInt32(constant.data!.count - 2))
        assertThrows(bytes, malformed: "bytes of data but shape")
    }

    func testOperatorCodeIndexOutOfRange() throws {
        var bytes = try ModelFixtures.bytes("selfie_segmentation")
        let op = try Self.subgraph(bytes).vector(3, elementSize: 4, what: "")!.table(at: 5, what: "")
        let field = try XCTUnwrap(try op.fieldPosition(0, size: 4))
        Self.patch(&bytes, at: field, UInt32(9999))
        assertThrows(bytes, malformed: "operator 5 uses operator code 9999")
    }

    func testOperatorInputOutOfRange() throws {
        var bytes = try ModelFixtures.bytes("selfie_segmentation")
        let model = try TFLiteModel(bytes: bytes)
        let op = try Self.subgraph(bytes).vector(3, elementSize: 4, what: "")!.table(at: 7, what: "")
        let inputs = try XCTUnwrap(try op.vector(1, elementSize: 4, what: ""))
        Self.patch(&bytes, at: inputs.start, Int32(model.tensors.count))
        assertThrows(bytes, malformed: "refer to tensor \(model.tensors.count)")
    }

    func testReadBeforeWrite() throws {
        var bytes = try ModelFixtures.bytes("face_detection_short_range")
        let model = try TFLiteModel(bytes: bytes)
        // Make the first runtime operator read the last operator's output.
        let last = try XCTUnwrap(model.operators.last?.outputs.first)
        let first = try XCTUnwrap(model.operators.firstIndex { $0.builtin == .conv2D })
        let op = try Self.subgraph(bytes).vector(3, elementSize: 4, what: "")!.table(at: first, what: "")
        let inputs = try XCTUnwrap(try op.vector(1, elementSize: 4, what: ""))
        Self.patch(&bytes, at: inputs.start, Int32(last))
        let patched = try TFLiteModel(bytes: bytes)
        XCTAssertThrowsError(try TFLiteGraph(model: patched)) { error in
            XCTAssertTrue("\(error)".contains("before any operator writes it"), "\(error)")
        }
    }

    // MARK: Helpers

    private func assertThrows(_ bytes: [UInt8], truncated: String? = nil, malformed: String? = nil,
                              file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try TFLiteModel(bytes: bytes), file: file, line: line) { error in
            guard let e = error as? TFLiteError else { return XCTFail("\(error)", file: file, line: line) }
            switch e.reason {
            case .truncated(let m) where truncated != nil:
                XCTAssertTrue(m.contains(truncated!), e.description, file: file, line: line)
            case .malformed(let m) where malformed != nil:
                XCTAssertTrue(m.contains(malformed!), e.description, file: file, line: line)
            default:
                XCTFail("unexpected error: \(e)", file: file, line: line)
            }
        }
    }

    private static func subgraph(_ bytes: [UInt8]) throws -> FlatTable {
        try FlatBufferReader(bytes: bytes).rootTable().vector(2, elementSize: 4, what: "")!.table(at: 0, what: "")
    }

    private static func patch<T: FixedWidthInteger>(_ bytes: inout [UInt8], at position: Int, _ value: T) {
        for k in 0..<MemoryLayout<T>.size {
            bytes[position + k] = UInt8(truncatingIfNeeded: value >> (8 * k))
        }
    }

    /// Where the flatbuffer ends: at the start of a trailing zip archive (its
    /// first local file header, or its central directory when it has no
    /// entries), else at the file's end. Assumes no zip comment.
    private static func flatbufferEnd(_ bytes: [UInt8]) -> Int {
        func u16(_ p: Int) -> Int { Int(bytes[p]) | Int(bytes[p + 1]) << 8 }
        func u32(_ p: Int) -> Int { u16(p) | u16(p + 2) << 16 }
        let eocd = bytes.count - 22
        guard eocd >= 0, u32(eocd) == 0x0605_4B50 else { return bytes.count }
        let directory = u32(eocd + 16)
        var end = directory, entry = directory
        for _ in 0..<u16(eocd + 10) {
            guard entry + 46 <= eocd, u32(entry) == 0x0201_4B50 else { return bytes.count }
            end = min(end, u32(entry + 42))
            entry += 46 + u16(entry + 28) + u16(entry + 30) + u16(entry + 32)
        }
        return end
    }

    /// File offsets that are not inside any constant buffer's data.
    private static func structureOffsets(_ model: TFLiteModel, size: Int) -> [Int] {
        var isData = [Bool](repeating: false, count: size)
        for tensor in model.tensors {
            guard let data = tensor.data else { continue }
            for i in data.indices { isData[i] = true }
        }
        return (0..<size).filter { !isData[$0] }
    }

    /// Boundary values find more bugs than uniform bytes.
    private static func interestingByte(_ rng: inout SeededGenerator) -> UInt8 {
        let special: [UInt8] = [0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF]
        return rng.next() % 2 == 0 ? special[Int(rng.next() % 6)] : UInt8(truncatingIfNeeded: rng.next())
    }
}

