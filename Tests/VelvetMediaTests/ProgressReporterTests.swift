import Foundation
import VelvetMedia
import VelvetTestSupport
import XCTest

/// The progress line: redrawn in place on a terminal, plain periodic lines elsewhere, and
/// nothing with `--quiet`; never on stdout.
final class ProgressReporterTests: XCTestCase {
    private final class Lines: @unchecked Sendable { var text = "" }

    func testPlainLinesComeEveryIntervalWithFramesFPSAndETA() {
        let start = Date(timeIntervalSince1970: 1000)
        let written = Lines()
        let progress = ProgressReporter(style: .plain, start: start) { written.text += $0 }
        progress.update(frames: 10, total: 250, now: start.addingTimeInterval(1))
        XCTAssertEqual(written.text, "", "nothing before the first interval")
        progress.update(frames: 50, total: 250, now: start.addingTimeInterval(ProgressReporter.plainInterval))
        progress.update(frames: 60, total: 250, now: start.addingTimeInterval(ProgressReporter.plainInterval + 1))
        progress.update(frames: 100, total: 0, now: start.addingTimeInterval(2 * ProgressReporter.plainInterval))
        progress.finish()
        XCTAssertEqual(written.text, "velvet: frame 50/250 (20 %)  10.0 fps  ETA 0:20\n"
                                     + "velvet: frame 100  10.0 fps\n", "a total-less input (a pipe) has no ETA")
    }

    func testTerminalRedrawsOneLine() {
        let start = Date(timeIntervalSince1970: 1000)
        let written = Lines()
        let progress = ProgressReporter(style: .terminal, start: start) { written.text += $0 }
        progress.update(frames: 25, total: 100, now: start.addingTimeInterval(1))
        progress.update(frames: 26, total: 100, now: start.addingTimeInterval(1.1)) // within 0.2 s: skipped
        progress.update(frames: 50, total: 100, now: start.addingTimeInterval(2))
        progress.finish()
        XCTAssertEqual(written.text, "\rvelvet: frame 25/100 (25 %)  25.0 fps  ETA 0:03\u{1B}[K"
                                     + "\rvelvet: frame 50/100 (50 %)  25.0 fps  ETA 0:02\u{1B}[K\r\u{1B}[K")
    }

    func testQuietWritesNothing() {
        let written = Lines()
        let progress = ProgressReporter(style: .off) { written.text += $0 }
        progress.update(frames: 1, total: 2, now: Date().addingTimeInterval(100))
        progress.finish()
        XCTAssertEqual(written.text, "")
    }

    /// On a terminal (`script` gives the render one) the line is drawn in place.
    func testARenderOnATerminalRedrawsItsLine() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.mkv"), output = scratch.path("out.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x64:rate=25", "-frames:v", "10", "-c:v", "libx264", input])
        let result = try Tool.run("/usr/bin/script", ["-qec", "\(Tool.velvet) render '\(input)' -o '\(output)' --no-effects", "/dev/null"])
        XCTAssertEqual(result.status, 0, result.stdout)
        XCTAssertTrue(result.stdout.contains("\rvelvet: frame 1/10 (10 %)  "), result.stdout.debugDescription)
        XCTAssertTrue(result.stdout.contains("\u{1B}[K"), "the rest of the line erased")
    }

    /// A render whose stderr is a pipe (not a terminal) writes no carriage returns or escape
    /// codes there, and nothing but the result on stdout.
    func testARenderOffATerminalWritesNoControlCodes() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.mkv"), output = scratch.path("out.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x64:rate=25", "-frames:v", "10", "-c:v", "libx264", input])
        let result = try Tool.run(Tool.velvet, ["render", input, "-o", output, "--no-effects"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertFalse(result.stderr.contains("\r") || result.stderr.contains("\u{1B}"), result.stderr.debugDescription)
        XCTAssertTrue(result.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("velvet: ") }, result.stderr)
        XCTAssertEqual(result.stdout, "")
    }
}
