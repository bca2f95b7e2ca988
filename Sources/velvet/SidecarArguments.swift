import Foundation
import VelvetFace
import VelvetFiles
import VelvetGPU
import VelvetMedia
import VelvetPipeline

/// `render --tracks FILE`, `--matte-in FILE`, `--matte OUT` and `--matte-zones OUT`: the files a beauty render
/// reads or writes beside its input and output (docs/CLI.md, Mattes and tracks).
struct SidecarArguments {
    var tracks: String?
    var matteIn: String?
    var matte: String?
    var zones: String?

    static func parse(_ arguments: inout ArgumentParser) -> SidecarArguments {
        SidecarArguments(tracks: arguments.value("--tracks"), matteIn: arguments.value("--matte-in"), matte: arguments.value("--matte"),
                         zones: arguments.value("--matte-zones"))
    }

    var isEmpty: Bool { tracks == nil && matteIn == nil && matte == nil && zones == nil }

    /// Usage errors (exit 2): the sidecars need the beauty pipeline, a matte output's format
    /// must suit the main output's kind.
    func check(input: String, output: String, beauty: BeautyRequest?) throws {
        guard !isEmpty else { return }
        let names = [("--tracks", tracks), ("--matte-in", matteIn), ("--matte", matte), ("--matte-zones", zones)]
            .filter { $0.1 != nil }.map(\.0)
        let need = "\(names.joined(separator: ", ")) \(names.count == 1 ? "needs" : "need")"
        // A sidecar is a file (`--tracks <(command)` is one): `-` is the main input's or output's.
        for (option, path, read) in [("--tracks", tracks, true), ("--matte-in", matteIn, true), ("--matte", matte, false),
                                     ("--matte-zones", zones, false)] where path == CommandFiles.standardStream {
            throw UsageError("\(option) needs a file, not -" + (read ? " (give its path, or <(command) to read a stream)" : ""))
        }
        // A track file and a matte are checked against the input's headers before rendering,
        // and a matte output is committed with the main output: both need files.
        if input == CommandFiles.standardStream {
            throw UsageError("\(need) an input file, not - (standard input)")
        }
        if output == CommandFiles.standardStream, matte != nil || zones != nil {
            throw UsageError("--matte and --matte-zones go with an output file, not -o - (standard output)")
        }
        guard let beauty else { throw UsageError("\(need) the beauty pipeline: leave out --no-effects") }
        if tracks != nil, let given = beauty.trackingOptions.first {
            throw UsageError("\(given) sets how faces are tracked, and with --tracks they come from the file: leave it out")
        }
        if let view = beauty.debugView, matte != nil || matteIn != nil || zones != nil {
            throw UsageError("--matte, --matte-zones and --matte-in go with a render, not with --debug-view \(view.rawValue)")
        }
        if beauty.preset.othersPreset != nil, matte != nil || zones != nil {
            // Each face's pass has a skin mask of its own; the mattes are of one.
            throw UsageError("--matte and --matte-zones do not go with a preset's others section (per-face settings)")
        }
        if let matte, let problem = MatteWriter.problem(matte: matte, output: output) { throw UsageError(problem) }
        if let zones, let problem = MatteWriter.problem(matte: zones, output: output, option: "--matte-zones") { throw UsageError(problem) }
    }

    func add(to files: inout CommandFiles) {
        if let tracks { files.input(tracks, "the track file") }
        if let matteIn { files.input(matteIn, "the --matte-in matte") }
        if let matte { files.output(matte, "--matte") }
        if let zones { files.output(zones, "--matte-zones") }
    }

    /// Reads and checks the track file and the user's matte against the input (exit 1, one
    /// line, before rendering), and sets up the matte output.
    /// `faces`: `--faces`, whose track IDs the track file must have.
    func open(input: String, context: GPUContext, stillFrame: Int?, faces: FaceSelection = .all, commit: CommitPolicy) throws -> RenderSidecars {
        var sidecars = RenderSidecars()
        guard !isEmpty else { return sidecars }
        let probe = try InputProbe(path: input)
        // A still output from a video takes one frame (--frame, else the only one).
        let takesOneFrame = stillFrame != nil
        if let tracks {
            let file = try TrackFile.read(tracks)
            guard (file.width, file.height) == (probe.uprightWidth, probe.uprightHeight) else {
                throw TrackFileError(tracks, "the track file is for \(file.width)x\(file.height) frames and the input's are "
                                     + "\(probe.uprightWidth)x\(probe.uprightHeight)")
            }
            if let frames = probe.declaredFrames, frames != file.frames.count {
                throw TrackFileError(tracks, "the track file has \(file.frames.count) frame(s) and the input \(frames)")
            }
            if let stillFrame, stillFrame >= file.frames.count {
                throw TrackFileError(tracks, "--frame \(stillFrame) is past the track file's \(file.frames.count) frame(s)")
            }
            if case .tracks(let chosen) = faces {
                let present = Set(file.frames.flatMap { $0.faces.map(\.trackID) })
                if let missing = chosen.sorted().first(where: { !present.contains($0) }) {
                    throw TrackFileError(tracks, "--faces \(missing): no face of the file has that track (it has "
                                         + (present.isEmpty ? "none" : present.sorted().map(String.init).joined(separator: ", ")) + ")")
                }
            }
            sidecars.tracks = TrackPlayback(file: file, context: context, stillFrame: takesOneFrame ? stillFrame : nil)
            sidecars.tracksPath = tracks
        }
        if let matteIn {
            let reader = try MatteReader(path: matteIn, input: input)
            if let stillFrame, !reader.isStillImage {
                throw MediaError.refused(path: matteIn, reason: "--frame \(stillFrame) takes one frame: give a still matte (.png)")
            }
            sidecars.matteIn = reader
        }
        if let matte {
            sidecars.matteOut = { width, height in try MatteWriter(path: matte, input: input, width: width, height: height, commit: commit) }
        }
        if let zones {
            sidecars.zonesOut = { width, height in try MatteWriter(path: zones, input: input, width: width, height: height, commit: commit) }
        }
        return sidecars
    }

    /// How the output is moved into place: with sidecars, the matte is moved into place (and
    /// a track file found as long as the input) just before the output, under the same lock.
    func commit(_ base: CommitPolicy, effect: BeautyEffect?) -> CommitPolicy {
        guard !isEmpty, let effect else { return base }
        return CommitPolicy(replacesExisting: base.replacesExisting, beforeRename: { _ in try effect.finishSidecars() })
    }
}
