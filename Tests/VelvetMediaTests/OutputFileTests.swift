import Foundation
import VelvetFiles
import VelvetTestSupport
import XCTest

/// The one temp-then-rename helper every output goes through.
final class OutputFileTests: XCTestCase {
    func testCommitReplacesOnlyWhenAskedAndNeverLeavesAPartial() throws {
        let scratch = try Scratch()
        let path = scratch.path("out.json")
        try OutputFile.write(Data("1".utf8), to: path, policy: .noClobber)
        XCTAssertThrowsError(try OutputFile.write(Data("2".utf8), to: path, policy: .noClobber)) { error in
            XCTAssertEqual(error as? OutputFileError, .exists(path: path))
        }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "1")
        try OutputFile.write(Data("3".utf8), to: path, policy: .replace)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "3")
        XCTAssertEqual(scratch.files, ["out.json"])

        let abandoned = try OutputFile(path: scratch.path("never.json"))
        _ = abandoned.creating { FileManager.default.createFile(atPath: $0, contents: Data("x".utf8)) }
        abandoned.discard()
        XCTAssertEqual(scratch.files, ["out.json"])
        XCTAssertThrowsError(try OutputFile(path: scratch.path("missing/out.json"))) { XCTAssertTrue("\($0)".contains("does not exist")) }
    }

    func testSiblingNamesStayWithinNameMaxAndDistinct() {
        let long = String(repeating: "é", count: 120) + ".mp4" // 244 bytes
        let a = SiblingName.hidden(long, suffix: ".velvet-partial-", reserve: 10)
        let b = SiblingName.hidden(String(long.dropFirst()), suffix: ".velvet-partial-", reserve: 10)
        XCTAssertLessThanOrEqual(a.utf8.count + 10, 255)
        XCTAssertTrue(a.hasPrefix(".éé") && a.hasSuffix(".velvet-partial-"), a)
        XCTAssertNotEqual(a, b)
        XCTAssertEqual(SiblingName.hidden("a.mp4", suffix: ".velvet-done"), ".a.mp4.velvet-done", "short names are kept whole")
        XCTAssertEqual(PartialFiles.path(for: "/x/a.mp4", pid: 42), "/x/.a.mp4.velvet-partial-42")
    }
}
