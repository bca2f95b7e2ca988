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
        _ = try abandoned.creating { FileManager.default.createFile(atPath: $0, contents: Data("x".utf8)) }
        abandoned.discard()
        XCTAssertEqual(scratch.files, ["out.json"])
        XCTAssertThrowsError(try OutputFile(path: scratch.path("missing/out.json"))) { XCTAssertTrue("\($0)".contains("does not exist")) }
    }

    /// A render's output reaches the disk before its name does, and its name after it: the
    /// partial file is synced before the rename and the folder after it (strace shows the calls
    /// in order), so a crash or power cut leaves the whole output or none at the final path.
    func testTheOutputIsSyncedBeforeItsRenameAndTheFolderAfter() throws {
        let scratch = try Scratch()
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10", "-frames:v", "3", scratch.path("in.mp4")])
        let output = scratch.path("out.mkv"), log = scratch.path("strace.log")
        let traced = try Tool.run("strace", ["-f", "-y", "-e", "trace=fsync,rename,renameat,renameat2,link", "-o", log,
                                             Tool.velvet, "render", scratch.path("in.mp4"), "-o", output, "--no-effects", "--quiet"])
        XCTAssertEqual(traced.status, 0, traced.stderr)
        let calls = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        let partial = ".out.mkv.velvet-partial"
        let dataSync = try XCTUnwrap(calls.firstIndex { $0.contains("fsync(") && $0.contains(partial) }, "the partial's fsync: \(calls)")
        let rename = try XCTUnwrap(calls.firstIndex { ($0.contains("rename") || $0.contains("link(")) && $0.contains(partial)
                                                      && $0.contains("= 0") }, "the rename: \(calls)")
        let folderSync = try XCTUnwrap(calls.lastIndex { $0.contains("fsync(") && $0.contains("<\(scratch.url.path)>") },
                                       "the folder's fsync: \(calls)")
        XCTAssertLessThan(dataSync, rename)
        XCTAssertLessThan(rename, folderSync)
    }

    /// Something planted at this process's partial name (a link to another file) is removed,
    /// never written through: the partial is created new (O_EXCL, O_NOFOLLOW) and locked.
    func testAPlantedLinkAtThePartialNameIsNotFollowed() throws {
        let scratch = try Scratch()
        let victim = scratch.path("victim.txt"), output = scratch.path("out.json")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        try FileManager.default.createSymbolicLink(atPath: PartialFiles.path(for: output), withDestinationPath: victim)
        try OutputFile.write(Data("new".utf8), to: output, policy: .noClobber)
        XCTAssertEqual(try String(contentsOfFile: victim, encoding: .utf8), "precious")
        XCTAssertEqual(try String(contentsOfFile: output, encoding: .utf8), "new")
        XCTAssertEqual(scratch.files.sorted(), ["out.json", "victim.txt"])
    }

    /// A scratch file lies in a folder of its own, open to this user alone, removed with it.
    func testScratchFilesHaveAPrivateFolder() throws {
        var folder = ""
        do {
            let scratch = try ScratchFile("work.mkv")
            folder = URL(fileURLWithPath: scratch.path).deletingLastPathComponent().path
            XCTAssertEqual(URL(fileURLWithPath: scratch.path).lastPathComponent, "work.mkv")
            var info = stat()
            XCTAssertEqual(stat(folder, &info), 0)
            XCTAssertEqual(info.st_mode & 0o777, 0o700)
            XCTAssertNotEqual(try ScratchFile("work.mkv").path, scratch.path, "every scratch file its own folder")
            try Data("x".utf8).write(to: URL(fileURLWithPath: scratch.path))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder), "the folder goes with the file")
    }

    func testALinkIsFollowedAndADeviceOrFIFOWrittenInPlace() throws {
        let scratch = try Scratch()
        // A link to a file: the file gets the output, the link stays a link.
        let real = scratch.path("real.json"), link = scratch.path("link.json")
        try Data("old".utf8).write(to: URL(fileURLWithPath: real))
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real.json")
        try OutputFile.write(Data("new".utf8), to: link, policy: .replace)
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: link), "real.json")
        XCTAssertEqual(try String(contentsOfFile: real, encoding: .utf8), "new")
        // A link to nothing yet: the file it names is created.
        let dangling = scratch.path("dangling.json")
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: "made.json")
        try OutputFile.write(Data("made".utf8), to: dangling, policy: .noClobber)
        XCTAssertEqual(try String(contentsOfFile: scratch.path("made.json"), encoding: .utf8), "made")
        XCTAssertEqual(Set(scratch.files), ["real.json", "link.json", "dangling.json", "made.json"], "no partial left")

        // A device: written in place, still a device afterwards, nothing beside it.
        let null = try OutputFile(path: "/dev/null")
        XCTAssertTrue(null.writesInPlace)
        XCTAssertEqual(null.temporaryPath, "/dev/null")
        try OutputFile.write(Data("x".utf8), to: "/dev/null", policy: .replace)
        var info = stat()
        XCTAssertEqual(stat("/dev/null", &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFCHR)

        // A FIFO: the reader gets the bytes; the FIFO stays a FIFO.
        let fifo = scratch.path("fifo")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        final class Received: @unchecked Sendable { var value = Data() } // written by the reader, read after it ends
        let received = Received()
        let reader = Thread { received.value = (try? FileHandle(forReadingAtPath: fifo)?.readToEnd()) ?? Data() }
        reader.start()
        try OutputFile.write(Data("through".utf8), to: fifo, policy: .replace)
        while !reader.isFinished { usleep(1000) }
        XCTAssertEqual(String(decoding: received.value, as: UTF8.self), "through")
        XCTAssertEqual(lstat(fifo, &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFIFO)
        let abandoned = try OutputFile(path: fifo)
        abandoned.discard()
        XCTAssertEqual(lstat(fifo, &info), 0, "discarding an in-place output removes nothing")

        // A directory is no output.
        XCTAssertThrowsError(try OutputFile(path: scratch.path(""))) { XCTAssertTrue("\($0)".contains("is a directory"), "\($0)") }
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

    /// A live writer whose partial appeared after the command's first check (two renders with
    /// `-y` started together) makes the output busy when this one creates its own partial, which
    /// it removes again; a sequence's frame does not look (its sequence was checked whole), and
    /// once the other writer is gone the output is written.
    func testAWriterThatAppearedMeanwhileMakesTheOutputBusy() throws {
        let scratch = try Scratch()
        let output = scratch.path("o.mp4")
        let other = PartialFiles.path(for: output, pid: 424242)
        let descriptor = open(other, O_RDWR | O_CREAT, 0o644)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        XCTAssertEqual(flock(descriptor, LOCK_EX), 0)
        let file = try OutputFile(path: output, policy: .replace)
        XCTAssertThrowsError(try file.creating { _ in }) { error in
            XCTAssertEqual("\(error)", "\(output) is being written by velvet process 424242; wait for it or stop it")
        }
        XCTAssertEqual(scratch.files, [".o.mp4.velvet-partial-424242"])
        let frame = try OutputFile(path: output, policy: .replace, isSequenceFrame: true)
        try frame.creating { path in try Data("frame".utf8).write(to: URL(fileURLWithPath: path)) }
        frame.discard()
        close(descriptor)
        let later = try OutputFile(path: output, policy: .replace)
        try later.creating { path in try Data("mine".utf8).write(to: URL(fileURLWithPath: path)) }
        try later.commit()
        XCTAssertEqual(try String(contentsOfFile: output, encoding: .utf8), "mine")
    }
}
