import Foundation
import VelvetGPU
import VelvetMedia

/// The `velvet` command line: parses the subcommand and maps errors to exit codes.
/// Exit codes: 0 success, 1 runtime error, 2 usage error (each one line on stderr), 128+N
/// ended by signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP, 131 SIGQUIT).
enum VelvetCommand {
    static let usage = """
    usage: velvet <command> [options]

    commands:
      demo                    make a clip from the test photo, render it, write demo-output/
          --output-dir DIR    where the demo's files go (default demo-output)
          --assets DIR        the folder holding grace_hopper.jpg (default test-assets, also
                              VELVET_TEST_ASSETS)
          --frames N, --size WxH  the clip's length and size (default 48, 640x360)
          --quiet             no progress lines
      render INPUT -o OUTPUT  render a video or still image with the beauty pipeline
                              (INPUT - reads standard input; -o - writes standard output)
          --codec NAME        video encoder: h264 (libx264, the default), hevc (libx265), or an
                              FFmpeg encoder: prores_ks, dnxhd, ffv1, libsvtav1, libaom-av1,
                              h264_nvenc, hevc_nvenc, ... (ffmpeg -encoders)
          --encoder-opt K=V   an option of the encoder, repeatable (ffmpeg -h encoder=NAME lists
                              them), e.g. profile=hq for prores_ks, profile=dnxhr_hq for dnxhd
          --format NAME       the container by FFmpeg's name instead of the extension's; with
                              -o - one of matroska, nut, mpegts, y4m
          --crf N             x264/x265 quality, 0-51 (default 18)
          --preset-x264 NAME  x264/x265 speed preset (default medium)
          --pix-fmt NAME      output pixel format (default: the input's if the encoder takes it,
                              else yuv420p, else the encoder's closest: ProRes yuv422p10le)
          --frame N           the frame a still output (.png, .jpg) takes from a video (0 = first)
          --framerate R       the rate an image sequence input (img%04d.png) is read at, as
                              ffmpeg's -framerate (default 25); -o f%04d.png writes one
          --allow-truncated   keep what decodes of a damaged or truncated input (warns)
          --quiet             no progress line
          --json              print a summary as JSON on stdout (frames, faces, GPU ms per stage
                              summed and per frame, fps); refused with -o -
          --matte OUT         also write the blend weight applied, frame by frame: FFV1 gray16le
                              .mkv for a video, a 16-bit grey .png for a still
          --matte-zones OUT   also write the zone map over the skin, the same way
          --matte-in FILE     multiply a grey or alpha matte (same size) into the skin mask
          --tracks FILE       render from a track file (velvet analyze --tracks) instead of
                              tracking the faces
    \(BeautyArguments.help)
      compare INPUT [--a bilateral] [--b freqsep] -o AB.mp4 [--report AB.html] [--metrics AB.json]
                              A/B video (A left, B right), metrics M4-M8 and an HTML report
          --a-preset P, --b-preset P  compare two presets (name or .json file), every stage,
                              instead of two smoothing methods (not with --a / --b on that side)
          --allow-truncated   as render's (also for batch and analyze)
          --framerate R       as render's (also for analyze)
      batch FILES... | --list FILE  --output-dir DIR [--shard I/N] [--devices 0,1] [render options]
                              render many files; finished outputs (proved by .NAME.velvet-done)
                              are skipped, so a rerun resumes; other settings or inputs re-render;
                              --list - reads the list from standard input
      analyze INPUT           faces (score, box, 468 landmarks) per frame
          --json              print them as JSON on stdout (the track file's format)
          --tracks OUT        write them as a track file (docs/CLI.md, Track files)
          --overlay OUT       write the input with the mesh and person mask drawn
          --mask OUT          write the person mask
          --detector short|full|auto, --max-faces N, --look-ahead K (as render's)
          --segmentation-model square|landscape|auto   person mask model (default auto:
                              landscape when the width is at least 1.33 x the height)
          --models DIR        the folder with the .tflite models (else VELVET_MODELS_DIR)
      presets list | show NAME|FILE | save NAME [--preset BASE] [beauty options] | delete NAME | default [NAME|--clear]
                              beauty presets (saved in $XDG_CONFIG_HOME/velvet/presets/);
                              presets knobs: every preset field and flag as a Markdown table
      luts list | export DIR  the built-in colour grades, as .cube files
      devices                 list Vulkan devices and the one Velvet would use
          --json              print them as JSON
      bench blur|media|nn|tracker|skin|soak|quality [options]
                              benchmarks (see Tools/bench-*.py, docs/PERFORMANCE.md); each
                              one's options: docs/CLI.md, bench
      version                 Velvet's version, the build's git describe, the Vulkan device, the
                              FFmpeg libraries (also velvet --version)
      help [COMMAND]          this text, or one command's (also --help; velvet COMMAND --help or -h)

    options (render, compare, demo, analyze, bench):
      --device INDEX|NAME     pick a Vulkan device (also VELVET_DEVICE); batch takes --devices 0,1
    options (every command that writes files: render, compare, batch, analyze, demo, presets save,
    luts export):
      -y                      overwrite existing outputs
      -n                      never overwrite (also the default: an existing output is an error)

    progress goes to stderr: one redrawn line on a terminal, else a plain line every 5 s.

    exit codes: 0 success, 1 runtime error (also a closed pipe on -o -), 2 usage error,
    128+N ended by signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP, 131 SIGQUIT; the unfinished
    output is removed)
    """

    /// Runs one command line and returns the exit code: 0 success, 1 runtime error, 2 usage
    /// error. (Signals exit 128+N from `TerminationSignals`.)
    /// - Parameter notUTF8: indices of `arguments` whose bytes were not UTF-8 (repaired by Swift).
    static func run(_ arguments: [String], notUTF8: [Int] = []) -> Int32 {
        guard let command = arguments.first else {
            printError(usage)
            return 2
        }
        let rest = Array(arguments.dropFirst())
        // JSON errors go to stdout, unless stdout carries the video (-o -).
        let stdoutIsMedia = ArgumentParser.writesMediaToStandardOutput(rest)
        // `velvet --json` (no command) asks for the JSON error too.
        FailureReport.shared.alsoAsJSON(arguments.contains("--json") && !stdoutIsMedia) // until the parser knows better
        do {
            if let index = notUTF8.first {
                throw UsageError("argument \(index + 1) ('\(arguments[index])') is not UTF-8 text: velvet takes UTF-8 file names "
                                 + "and values (rename the file, or reach it through a link with a UTF-8 name)")
            }
            // --help wins over anything else on the line, a malformed rest included (not an
            // operand after `--`: a file named --help).
            // An unknown command stays an error (`velvet frobnicate --help`); an option in the
            // command's place (`velvet --version --help`) gets the whole usage.
            let options = rest.prefix { $0 != "--" }
            if options.contains("--help") || options.contains("-h"), CommandList.named(command) != nil || command.hasPrefix("-") {
                print(CommandList.named(command) != nil ? try HelpText.usage(of: command) : usage)
                try StandardOutput.flush()
                return 0
            }
            var parser = try ArgumentParser(rest)
            FailureReport.shared.alsoAsJSON((parser.has(flag: "--json") || command == "--json") && !stdoutIsMedia)
            switch command {
            case "--help", "-h": try HelpText.run(parser)
            case "--version": try VersionCommand.run(parser)
            default:
                guard let run = CommandList.named(command) else { throw UsageError("unknown command '\(command)'") }
                if parser.flag("--help") || parser.flag("-h") {
                    print(try HelpText.usage(of: command))
                } else {
                    try run(parser)
                }
            }
            try StandardOutput.flush()
            return 0
        } catch is StandardOutput.ReaderClosed {
            return 0
        } catch {
            return fail(error, helpCommand: CommandList.named(command) != nil && command != "help" ? "velvet \(command) --help" : "velvet help")
        }
    }

    /// - Parameter helpCommand: where a usage error points (`velvet render --help`).
    private static func fail(_ error: Error, helpCommand: String) -> Int32 {
        let code = ErrorMessage.exitCode(for: error)
        let message = ErrorMessage.text(for: error)
        let line: String
        switch code {
        case 2: line = "velvet: \(message) (see \(helpCommand))"
        case 130: line = "velvet: interrupted; unfinished output removed"
        default: line = "velvet: error: \(message)"
        }
        FailureReport.shared.print(line: line, message: message, exitCode: code)
        return code
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
