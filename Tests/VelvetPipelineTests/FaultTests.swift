import Foundation
import VelvetTestSupport
import XCTest

/// Renders that meet awkward content: a face that leaves and comes back, and frames with
/// more faces than the cap. Each must finish, keep every frame and report what it tracked.
final class FaultTests: XCTestCase {
    private var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    private func render(_ arguments: [String]) throws -> [String: Any] {
        let result = try Tool.run(Tool.velvet, ["render"] + arguments + ["--json", "--quiet"],
                                  environment: ["VELVET_VALIDATION": "1",
                                                "VELVET_MODELS_DIR": repository.appendingPathComponent("models").path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr.trimmingCharacters(in: .whitespacesAndNewlines),
                       "velvet: validation layer on, 0 message(s)", "nothing else on stderr")
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: result.output) as? [String: Any])
    }

    /// Faces per frame from the summary's runs ([{"frames": "0-11", "faces": 1}, ...]).
    private func facesPerFrame(_ summary: [String: Any]) throws -> [Int] {
        let runs = try XCTUnwrap(summary["faces"] as? [[String: Any]])
        return try runs.flatMap { run -> [Int] in
            let bounds = try XCTUnwrap(run["frames"] as? String).split(separator: "-").compactMap { Int($0) }
            let faces = try XCTUnwrap(run["faces"] as? Int)
            return Array(repeating: faces, count: (bounds.last! - bounds.first!) + 1)
        }
    }

    private var photo: String { repository.appendingPathComponent("test-assets/grace_hopper.jpg").path }

    /// 12 frames with the face, 12 of a background crop, 12 with the face again.
    func testFaceLeavingAndReturning() throws {
        let scratch = try Scratch()
        let clip = scratch.path("away-and-back.mp4")
        try Tool.ffmpeg(["-loop", "1", "-framerate", "24", "-t", "0.5", "-i", photo,
                         "-loop", "1", "-framerate", "24", "-t", "0.5", "-i", photo,
                         "-loop", "1", "-framerate", "24", "-t", "0.5", "-i", photo,
                         "-filter_complex", "[0]scale=256:300,setsar=1[a];[1]crop=120:200:0:0,scale=256:300,setsar=1[b];"
                            + "[2]scale=256:300,setsar=1[c];[a][b][c]concat=n=3:v=1:a=0,format=yuv420p",
                         "-c:v", "libx264", "-crf", "10", clip])
        XCTAssertEqual(try Tool.probe(clip, "stream=nb_frames"), "36")
        let output = scratch.path("out.mp4")
        let summary = try render([clip, "-o", output])
        XCTAssertEqual(summary["frames"] as? Int, 36)
        XCTAssertEqual(try Tool.probe(output, "stream=nb_frames"), "36")
        let faces = try facesPerFrame(summary)
        XCTAssertEqual(faces.count, 36)
        XCTAssertEqual(Array(faces[0..<12]), Array(repeating: 1, count: 12), "the face before it leaves: \(faces)")
        XCTAssertEqual(Array(faces[12..<24]), Array(repeating: 0, count: 12), "no face while it is away: \(faces)")
        XCTAssertEqual(Array(faces[24..<36]), Array(repeating: 1, count: 12), "found again the frame it returns: \(faces)")
    }

    /// A face that leaves a still shot (its last 30 frames the same plain picture): it fades
    /// out over the look-ahead's frames, or the hold's without look-ahead, and every frame
    /// after that is the input's (M14). Its held state was kept on the repeated pictures, so
    /// its makeup stayed painted on the empty background to the end.
    func testAFaceLeavingAStillShotFadesOut() throws {
        let scratch = try Scratch()
        let clip = scratch.path("vanish.mkv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=0x406080:s=640x360:r=25", "-loop", "1", "-i", photo, "-filter_complex",
                         "[1]scale=-2:240,fps=25[g];[0][g]overlay=x=200:y=60:enable='lt(n,10)':shortest=1",
                         "-frames:v", "40", "-c:v", "ffv1", "-pix_fmt", "yuv420p", clip])
        let before = try Tool.frameMD5s(clip).split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: ",").last! }
        XCTAssertEqual(before.count, 40)
        for (arguments, fade) in [([], 6), (["--look-ahead", "0"], 3)] {
            let output = scratch.path("out\(fade).mkv")
            _ = try render([clip, "-o", output, "--codec", "ffv1"] + arguments)
            let after = try Tool.frameMD5s(output).split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: ",").last! }
            XCTAssertEqual(after.count, 40)
            let changed = (0..<40).filter { before[$0] != after[$0] }
            XCTAssertEqual(changed, Array(0..<(10 + fade)), "\(arguments): the face's frames and its fade, then the input's")
        }
    }

    /// A still shot whose face is covered for 6 frames (a black box), then shown again as
    /// before: the frames after the cover render as the frames before it. What the stages
    /// measured on the covered frames (the face bridged across the gap) entered the face's
    /// averages over frames, and the repeated pictures after it kept them: about 40 % less
    /// smoothing to the end of the shot.
    func testAFaceSeenAgainAfterACoverRendersAsBefore() throws {
        let scratch = try Scratch()
        let clip = scratch.path("cover.mkv")
        try Tool.ffmpeg(["-loop", "1", "-i", photo, "-vf",
                         "scale=-2:360,pad=640:360:168:0,drawbox=x=200:y=60:w=280:h=260:color=black:t=fill:enable='between(n,12,17)',fps=25",
                         "-frames:v", "30", "-c:v", "ffv1", "-pix_fmt", "yuv420p", clip])
        for arguments in [[], ["--look-ahead", "0"]] {
            let output = scratch.path("out\(arguments.count).mkv")
            _ = try render([clip, "-o", output, "--codec", "ffv1"] + arguments)
            let frames = try Tool.frameMD5s(output).split(separator: "\n")
            XCTAssertEqual(frames.count, 30)
            XCTAssertEqual(frames[18], frames[0], "\(arguments): the first frame after the cover")
            XCTAssertEqual(frames[29], frames[0], "\(arguments): the last frame")
        }
    }

    /// `analyze --tracks` then `render --tracks` gives the render's pixels when a face
    /// leaves too: analyze holds a lost face as the render's look-ahead does (K frames, fading
    /// over K + 1); it held it as the causal tracker does (3 frames), so frames 10-15 differed.
    func testATrackFileOfALeavingFaceRendersAsTheRender() throws {
        let scratch = try Scratch()
        let clip = scratch.path("vanish.mkv"), tracks = scratch.path("t.json")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=0x406080:s=640x360:r=25", "-loop", "1", "-i", photo, "-filter_complex",
                         "[1]scale=-2:240,fps=25[g];[0][g]overlay=x=200:y=60:enable='lt(n,10)':shortest=1,noise=alls=3:allf=t",
                         "-frames:v", "24", "-c:v", "ffv1", "-pix_fmt", "yuv420p", clip])
        _ = try render([clip, "-o", scratch.path("plain.mkv"), "--codec", "ffv1"])
        let analyze = try Tool.run(Tool.velvet, ["analyze", clip, "--tracks", tracks, "--quiet"],
                                   environment: ["VELVET_MODELS_DIR": repository.appendingPathComponent("models").path])
        XCTAssertEqual(analyze.status, 0, analyze.stderr)
        _ = try render([clip, "-o", scratch.path("tracked.mkv"), "--codec", "ffv1", "--tracks", tracks])
        XCTAssertEqual(try Tool.frameMD5s(scratch.path("tracked.mkv")), try Tool.frameMD5s(scratch.path("plain.mkv")))
    }

    /// A 5x4 grid of the same face: by default every one is tracked in every frame of a
    /// video and found in a still; `--max-faces` caps them, keeping the largest.
    func testTwentyFacesAreTrackedAndTheCapHolds() throws {
        let scratch = try Scratch()
        let grid = scratch.path("twenty.mp4")
        try Tool.ffmpeg(["-loop", "1", "-i", photo, "-vf", "scale=320:-2,tile=5x4,format=yuv420p", "-frames:v", "3",
                         "-r", "24", "-c:v", "libx264", "-crf", "10", grid])
        let output = scratch.path("out.mp4")
        XCTAssertEqual(try facesPerFrame(try render([grid, "-o", output])), [20, 20, 20], "all 20, every frame")
        XCTAssertEqual(try Tool.probe(output, "stream=nb_frames"), "3")
        XCTAssertEqual(try facesPerFrame(try render([grid, "-o", output, "-y", "--max-faces", "4"])), [4, 4, 4], "the cap")

        let still = scratch.path("twenty.png")
        try Tool.ffmpeg(["-loop", "1", "-i", photo, "-vf", "scale=320:-2,tile=5x4", "-frames:v", "1", still])
        XCTAssertEqual(try facesPerFrame(try render([still, "-o", scratch.path("out.png")])), [20])
    }

    /// A second face that walks in while one is tracked is picked up within the detection
    /// cadence (a detection pass every 10 frames while faces are tracked).
    func testAFaceEnteringMidClipIsPickedUpWithinTheCadence() throws {
        let scratch = try Scratch()
        let clip = scratch.path("entering.mp4")
        // 640x300: the face on the left throughout, a second on the right from frame 13.
        try Tool.ffmpeg(["-loop", "1", "-framerate", "24", "-t", "1.5", "-i", photo,
                         "-filter_complex", "[0]scale=256:300,setsar=1,split[a][b];"
                            + "color=c=0x6e6e6e:s=640x300:r=24:d=1.5[bg];[bg][a]overlay=0:0[l];"
                            + "[l][b]overlay=384:0:enable='gte(n,13)',format=yuv420p",
                         "-frames:v", "36", "-c:v", "libx264", "-crf", "10", clip])
        let faces = try facesPerFrame(try render([clip, "-o", scratch.path("out.mp4")]))
        XCTAssertEqual(faces.count, 36)
        XCTAssertEqual(Array(faces[0..<13]), Array(repeating: 1, count: 13), "one face before the second enters: \(faces)")
        let pickedUp = try XCTUnwrap(faces.indices.first { $0 >= 13 && faces[$0] == 2 }, "the second face is found: \(faces)")
        XCTAssertLessThanOrEqual(pickedUp, 13 + 10, "within the detection cadence: \(faces)")
        XCTAssertTrue(faces[pickedUp...].allSatisfy { $0 == 2 }, "and kept: \(faces)")
    }
}
