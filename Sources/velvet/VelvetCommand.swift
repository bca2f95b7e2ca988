import Foundation
import VelvetGPU
import VelvetMedia

/// The `velvet` command line: parses the subcommand and maps errors to exit codes.
/// Exit codes: 0 success, 1 runtime error (message on stderr), 2 usage error, 130 interrupted.
enum VelvetCommand {
    static let usage = """
    usage: velvet <command> [options]

    commands:
      demo                    make a clip from the test photo, render it, write demo-output/
      render INPUT -o OUTPUT  render a video or still image with the beauty pipeline
          --codec h264|hevc   video encoder (default h264: libx264; hevc: libx265)
          --crf N             quality, 0-51 (default 18)
          --preset-x264 NAME  x264/x265 speed preset (default medium)
          --pix-fmt NAME      output pixel format (default: the input's, else yuv420p)
          --frame N           the frame a still output (.png, .jpg) takes from a video (0 = first)
          --allow-truncated   keep what decodes of a damaged or truncated input (warns)
          --quiet             no progress line
          --json              print a summary as JSON on stdout (frames, faces, GPU ms per stage
                              summed and per frame, fps)
    \(BeautyArguments.help)
      compare INPUT [--a bilateral] [--b freqsep] -o AB.mp4 [--report AB.html] [--metrics AB.json]
                              A/B video (A left, B right), metrics M4-M8 and an HTML report
      batch FILES... | --list FILE  --output-dir DIR [--shard I/N] [--devices 0,1] [render options]
                              render many files; finished outputs are skipped, so a rerun resumes
      analyze INPUT           faces (score, box, 468 landmarks) per frame
          --json              print them as JSON on stdout
          --overlay OUT       write the input with the mesh and person mask drawn
          --mask OUT          write the person mask
          --detector short|full|auto, --max-faces N
      presets list | show NAME | save NAME [--preset BASE] [beauty options] | delete NAME | default [NAME|--clear]
                              beauty presets (saved in $XDG_CONFIG_HOME/velvet/presets/)
      luts list | export DIR  the built-in colour grades, as .cube files
      devices                 list Vulkan devices and the one Velvet would use
      bench blur|media|nn|tracker|skin [options]
                              benchmarks (see Tools/bench-*.py, docs/PERFORMANCE.md)

    options (render, compare, demo, analyze, bench):
      --device INDEX|NAME     pick a Vulkan device (also VELVET_DEVICE); batch takes --devices 0,1
    """

    static func run(_ arguments: [String]) -> Int32 {
        guard let command = arguments.first else {
            printError(usage)
            return 2
        }
        let rest = Array(arguments.dropFirst())
        do {
            switch command {
            case "render": try RenderCommand.run(try ArgumentParser(rest))
            case "demo": try DemoCommand.run(try ArgumentParser(rest))
            case "presets": try PresetsCommand.run(try ArgumentParser(rest))
            case "batch": try BatchCommand.run(try ArgumentParser(rest))
            case "compare": try CompareCommand.run(try ArgumentParser(rest))
            case "luts": try LUTsCommand.run(try ArgumentParser(rest))
            case "analyze": try AnalyzeCommand.run(try ArgumentParser(rest))
            case "devices": try DevicesCommand.run(try ArgumentParser(rest))
            case "bench": try BenchCommand.run(try ArgumentParser(rest))
            case "help", "--help", "-h": print(usage)
            default: throw UsageError("unknown command '\(command)'")
            }
            return 0
        } catch MediaError.interrupted {
            printError("velvet: interrupted; the unfinished output was removed")
            return 130
        } catch let error as UsageError {
            printError("velvet: \(error.message)\n\n\(usage)")
            return 2
        } catch {
            printError("velvet: error: \(error)")
            return 1
        }
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
