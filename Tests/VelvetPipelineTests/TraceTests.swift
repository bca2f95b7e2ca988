import Foundation
import VelvetTestSupport
import XCTest

/// `VELVET_TRACE=FILE`: a render's timeline per thread, in the Trace Event format, and
/// `Tools/trace-summary.py` over it.
final class TraceTests: XCTestCase {
    private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private struct Span {
        let name: String
        let thread: Int
        let start: Double
        let end: Double
    }

    /// A 12-frame clip rendered with the default look-ahead and the trace on: every thread of
    /// the render is named and its spans nest; the models load on the preparation thread; one "render" span holds them all; the encode
    /// thread encoded each output frame once; the GPU thread waited on fences and the
    /// look-ahead thread tracked frames; the GPU row has each frame's colour conversion in; the
    /// decode thread staged each frame's upload; and the summary and its start-up view read it.
    func testRenderWritesATimelinePerThread() throws {
        let scratch = try Scratch()
        let clip = scratch.path("clip.mp4"), output = scratch.path("out.mp4"), trace = scratch.path("trace.json")
        try Tool.ffmpeg(["-loop", "1", "-framerate", "25", "-t", "0.48", "-i", repository.appendingPathComponent("test-assets/grace_hopper.jpg").path,
                         "-vf", "scale=192:224,setsar=1,format=yuv420p", "-c:v", "libx264", "-preset", "ultrafast", clip])
        let result = try Tool.run(Tool.velvet, ["render", clip, "-o", output, "--quiet", "--json"],
                                  environment: ["VELVET_VALIDATION": "1", "VELVET_TRACE": trace,
                                                "VELVET_MODELS_DIR": repository.appendingPathComponent("models").path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let frames = try Tool.probe(output, "packet=pts_time").split(separator: "\n").count
        XCTAssertEqual(frames, 12)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        // A CPU device renders from the look-ahead's converted image; a GPU converts again.
        let renderConversions = try XCTUnwrap(report["device_kind"] as? String) == "cpu" ? 0 : frames

        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: trace))) as? [String: Any])
        let events = try XCTUnwrap(document["traceEvents"] as? [[String: Any]])
        var threads: [String: Int] = [:]
        for event in events where event["ph"] as? String == "M" {
            let name = try XCTUnwrap((event["args"] as? [String: Any])?["name"] as? String)
            threads[name] = try XCTUnwrap(event["tid"] as? Int)
        }
        // And the pipeline compile threads (`velvet-compile`), where they compiled anything.
        XCTAssertEqual(Set(threads.keys).subtracting(["velvet-compile"]), ["v-decode", "v-gpu", "v-lookahead", "v-encode", "v-prepare", "gpu"])
        let spans = try events.filter { $0["ph"] as? String == "X" }.map { event in
            let start = try XCTUnwrap(event["ts"] as? Double), duration = try XCTUnwrap(event["dur"] as? Double)
            XCTAssertGreaterThanOrEqual(duration, 0)
            return Span(name: try XCTUnwrap(event["name"] as? String), thread: try XCTUnwrap(event["tid"] as? Int),
                        start: start, end: start + duration)
        }
        func named(_ thread: String, _ name: String) -> [Span] { spans.filter { $0.thread == threads[thread] && $0.name == name } }

        let renders = spans.filter { $0.name == "render" }
        XCTAssertEqual(renders.count, 1)
        let render = try XCTUnwrap(renders.first)
        // The render's own threads work inside it (the calling thread loads the models before).
        let renderThreads = Set(["v-decode", "v-gpu", "v-lookahead", "v-prepare"].compactMap { threads[$0] })
        for span in spans where renderThreads.contains(span.thread) {
            XCTAssertTrue(span.start >= render.start && span.end <= render.end, "\(span.name) lies outside the render")
        }
        // On one thread, two spans are nested or apart, never half over each other.
        for thread in threads.values where thread != threads["gpu"] {
            let own = spans.filter { $0.thread == thread }.sorted { ($0.start, -$0.end) < ($1.start, -$1.end) }
            var open: [Span] = []
            for span in own {
                while let last = open.last, span.start >= last.end { open.removeLast() }
                if let last = open.last { XCTAssertLessThanOrEqual(span.end, last.end, "\(span.name) overlaps \(last.name)") }
                open.append(span)
            }
        }
        XCTAssertEqual(named("v-encode", "encode").count, frames)
        XCTAssertEqual(named("v-decode", "decode").count, frames + 1, "every frame, then the end of the input")
        XCTAssertEqual(named("v-gpu", "frame.begin").count, frames)
        XCTAssertEqual(named("v-gpu", "frame.finish").count, frames)
        XCTAssertFalse(named("v-gpu", "fence.wait").isEmpty)
        XCTAssertEqual(named("v-lookahead", "lookahead.track").count, frames)
        // The models load while the effect prepares (side by side, on worker threads), before
        // the first frame is tracked.
        let prepared = try XCTUnwrap(named("v-prepare", "effect.prepare").first)
        let loads = spans.filter { $0.name.hasPrefix("model.load") }
        XCTAssertEqual(loads.count, 4, "the mesh, two detectors and the person segmentation: \(loads.map(\.name))")
        for load in loads {
            XCTAssertTrue(load.start >= prepared.start && load.end <= prepared.end, "\(load.name) outside effect.prepare")
            XCTAssertFalse([threads["v-gpu"], threads["v-lookahead"]].contains(load.thread), "\(load.name) on a render thread")
        }
        XCTAssertLessThanOrEqual(prepared.end, try XCTUnwrap(named("v-lookahead", "lookahead.track").map(\.start).min()))
        XCTAssertEqual(named("gpu", "color_in").count, renderConversions)
        XCTAssertEqual(named("gpu", "lookahead.color_in").count, frames)
        XCTAssertEqual(named("gpu", "lookahead.upload").count, frames)
        XCTAssertEqual(named("gpu", "upload").count, 0, "a frame shown to the look-ahead is not uploaded again")
        // The decode thread copies each frame's planes into upload staging; the GPU thread only
        // records the GPU's copy (`FrameStaging`).
        XCTAssertEqual(named("v-decode", "stage").count, frames)
        XCTAssertEqual(named("v-gpu", "upload.copy").count, 0, "the GPU thread copied a frame the decode thread had staged")
        // Images made while tracing are spans of their own (their layout change waits on the queue).
        XCTAssertFalse(named("v-gpu", "gpu.image").isEmpty)
        // Recording each GPU section is a CPU span named after it, on the thread that recorded it.
        XCTAssertEqual(named("v-gpu", "record:color_in").count, renderConversions)
        XCTAssertEqual(named("v-gpu", "record:lookahead.color_in").count, frames)
        let recorded = Set(spans.filter { $0.name.hasPrefix("record:") }.map { String($0.name.dropFirst("record:".count)) })
        let timed = Set(spans.filter { $0.thread == threads["gpu"] }.map(\.name))
        XCTAssertTrue(recorded.contains { $0.hasPrefix("skin.") } && recorded.contains { $0.hasPrefix("face.") }, "\(recorded)")
        XCTAssertTrue(recorded.isSubset(of: timed), "recorded but not timed: \(recorded.subtracting(timed))")

        let summary = try Tool.run("python3", [repository.appendingPathComponent("Tools/trace-summary.py").path, trace, "--from-frame", "2"])
        XCTAssertEqual(summary.status, 0, summary.stderr)
        // (The look-ahead may have tracked every frame before frame 2 was encoded: its row can be empty.)
        for row in ["9 frames from frame 2", "v-gpu: work", "gpu: work", "frame.finish/fence.wait"] {
            XCTAssertTrue(summary.stdout.contains(row), "summary lacks \(row):\n\(summary.stdout)")
        }
        // --startup: the spans before the first frame was encoded, thread by thread.
        let startup = try Tool.run("python3", [repository.appendingPathComponent("Tools/trace-summary.py").path, trace, "--startup"])
        XCTAssertEqual(startup.status, 0, startup.stderr)
        for row in ["v-prepare", "effect.prepare", "v-decode", "writer.open", "first frame encoded at"] {
            XCTAssertTrue(startup.stdout.contains(row), "start-up lacks \(row):\n\(startup.stdout)")
        }
        XCTAssertFalse(startup.stdout.contains("frame.finish/"), startup.stdout)
    }

    /// `VELVET_DISPATCH_TIMES=skin.,color_`: each dispatch of the sections so named is timed
    /// on its own (`section/kernel` in `--json`'s GPU times, and the section's own row keeps
    /// only what ran before its first dispatch); other sections are not split, and without
    /// the variable nothing is.
    func testDispatchTimesSplitTheNamedSections() throws {
        let scratch = try Scratch()
        let clip = scratch.path("clip.mp4")
        try Tool.ffmpeg(["-loop", "1", "-framerate", "25", "-t", "0.12", "-i", repository.appendingPathComponent("test-assets/grace_hopper.jpg").path,
                         "-vf", "scale=192:224,setsar=1,format=yuv420p", "-c:v", "libx264", "-preset", "ultrafast", clip])
        func stageTimes(_ environment: [String: String]) throws -> (stages: Set<String>, onCPU: Bool) {
            let result = try Tool.run(Tool.velvet, ["render", clip, "-o", scratch.path("out.mp4"), "-y", "--quiet", "--json"],
                                      environment: environment.merging(["VELVET_MODELS_DIR": repository.appendingPathComponent("models").path]) { $1 })
            XCTAssertEqual(result.status, 0, result.stderr)
            let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            return (Set(try XCTUnwrap(report["gpu_ms_per_frame"] as? [String: Double]).keys),
                    try XCTUnwrap(report["device_kind"] as? String) == "cpu")
        }
        // A CPU device renders from the look-ahead's converted image (no color_in of its own).
        let (split, onCPU) = try stageTimes(["VELVET_DISPATCH_TIMES": "skin.,color_,lookahead.", "VELVET_VALIDATION": "1"])
        let conversion = onCPU ? "lookahead.color_in" : "color_in"
        // A kernel's variants apart: `kernel[CONSTANT=value,...]` where it was specialised.
        for (kernel, ending) in [("\(conversion)/yuv_to_rgb[LAYOUT_KIND=", "]"), ("color_out/rgb_to_yuv", ""),
                                 ("skin.mask/beauty_skin_mask", ""), ("skin.spots/beauty_spots[", "PASS=0]"),
                                 ("skin.spots/beauty_spots[", "PASS=1]"), ("skin.spots/beauty_spots[", "PASS=2]")] {
            XCTAssertTrue(split.contains { $0.hasPrefix(kernel) && $0.hasSuffix(ending) }, "\(kernel)...\(ending): \(split.sorted())")
        }
        XCTAssertTrue(split.contains("grade"), "an unnamed section stays whole: \(split.sorted())")
        XCTAssertFalse(split.contains { $0.hasPrefix("grade/") || $0.hasPrefix("face.") && $0.contains("/") }, "\(split.sorted())")
        let whole = try stageTimes([:]).stages
        XCTAssertFalse(whole.contains { $0.contains("/") }, "\(whole.sorted())")
        XCTAssertTrue(whole.isSuperset(of: [conversion, "skin.mask", "skin.spots", "grade"]), "\(whole.sorted())")
    }

    /// A trace that cannot be written is one warning line; the render still succeeds.
    func testAnUnwritableTraceOnlyWarns() throws {
        let scratch = try Scratch()
        let clip = scratch.path("clip.mp4"), output = scratch.path("out.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=0.3", "-pix_fmt", "yuv420p", "-c:v", "libx264", clip])
        let result = try Tool.run(Tool.velvet, ["render", clip, "-o", output, "--quiet"],
                                  environment: ["VELVET_TRACE": scratch.path("missing/trace.json"),
                                                "VELVET_MODELS_DIR": repository.appendingPathComponent("models").path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: output))
        let warnings = result.stderr.split(separator: "\n").filter { !$0.contains("validation layer on") }
        XCTAssertEqual(warnings.count, 1, result.stderr)
        XCTAssertTrue(warnings.first?.hasPrefix("velvet: warning: VELVET_TRACE: cannot write") == true, result.stderr)
    }
}
