#!/usr/bin/env python3
"""The benchmark table of docs/PERFORMANCE.md, in one run on one machine.

Runs, on the same inputs and in the same run:

  * end to end (`velvet bench media --beauty --json --repeats 2`, best of two): a face clip
    made from the Grace Hopper photo at each size, rendered with the default preset and each
    smoothing method, beside
    a plain transcode with the same encoder settings (libavcodec + libx264, no GPU) and the
    GPU passthrough; GPU ms per frame per stage from the renders;
  * the skin pipeline on one frame of each size (`Tools/bench-skin.py`): Velvet's skin stages
    (GPU timestamps) beside cv2.bilateralFilter, cv2.ximgproc.guidedFilter and FFmpeg's
    `bilateral` filter on the same frame;
  * the tracker (`Tools/bench-tracker.py`): Velvet's tracker per frame beside MediaPipe
    0.10.21's CPU face mesh + selfie segmentation on the same frame;

and prints one Markdown report (a summary table with the ratios, then the per-stage table).
An anchor that cannot run here (no OpenCV contrib, no mediapipe venv, no ffmpeg CLI) is
printed as "not measured" with the reason, never as a number.

    Tools/setup.sh --python --models --assets     # anchors: .venv (OpenCV), .venv-mediapipe
    swift build -c release
    Tools/bench-table.py --velvet .build/release/velvet [--sizes 1280x720,1920x1080]
        [--frames 100] [--opencv-python .venv/bin/python] [--mediapipe-python .venv-mediapipe/bin/python]
        [--device D] [--output table.md]
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = os.path.join(ROOT, "Tools")


def run_json(command, label, log):
    """Runs `command`; returns (parsed JSON of its last stdout line or of a file it wrote, None) or (None, reason)."""
    log.write(f"$ {' '.join(command)}\n")
    log.flush()
    completed = subprocess.run(command, capture_output=True, text=True)
    log.write(completed.stdout + completed.stderr)
    if completed.returncode != 0:
        last = (completed.stderr.strip().splitlines() or ["exit " + str(completed.returncode)])[-1]
        return None, f"{label} failed: {last[:160]}"
    return completed.stdout, None


def python_can(python, statement):
    if not python or not (os.path.exists(python) or shutil.which(python)):
        return False
    return subprocess.run([python, "-c", statement], capture_output=True).returncode == 0


def fmt(value, digits=2):
    return "—" if value is None else f"{value:.{digits}f}"


def ratio(numerator, denominator):
    if numerator is None or denominator is None or denominator == 0:
        return "—"
    return f"{numerator / denominator:.2f}x"


def stage_groups(gpu_ms):
    """Per-frame GPU ms summed into the stages the issue names."""
    def total(*prefixes):
        values = [v for k, v in gpu_ms.items() if any(k == p or k.startswith(p + ".") for p in prefixes)]
        return sum(values) if values else None
    return [
        ("tracker (detect + mesh + segmentation)", total("face")),
        ("skin mask + zones", total("skin.mask")),
        ("spot removal", total("skin.spots")),
        ("smoothing", total("skin.smoothing")),
        ("blend (+ sharpen)", total("skin.blend", "skin.sharpen")),
        ("colour grade (LUT)", total("grade")),
        ("makeup + reshape", total("makeup", "reshape")),
        ("colour conversion in + out", total("color_in", "color_out")),
        ("upload + download", total("upload", "download")),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--velvet", required=True, help="a release build of velvet")
    parser.add_argument("--sizes", default="1280x720,1920x1080")
    parser.add_argument("--frames", type=int, default=100, help="frames per end-to-end render and per tracker run")
    parser.add_argument("--iterations", type=int, default=20, help="repeats of the skin and anchor filters")
    parser.add_argument("--opencv-python", default=os.path.join(ROOT, ".venv", "bin", "python"))
    parser.add_argument("--mediapipe-python", default=os.path.join(ROOT, ".venv-mediapipe", "bin", "python"))
    parser.add_argument("--device", default=None)
    parser.add_argument("--output", default=None, help="also write the report here")
    parser.add_argument("--log", default=None, help="the commands' own output (default: a temporary file)")
    arguments = parser.parse_args()
    device_arguments = ["--device", arguments.device] if arguments.device else []
    sizes = [tuple(int(v) for v in size.lower().split("x")) for size in arguments.sizes.split(",")]

    work = tempfile.mkdtemp(prefix="velvet-bench-table-")
    log_path = arguments.log or os.path.join(work, "commands.log")
    log = open(log_path, "w")
    opencv_ok = python_can(arguments.opencv_python, "import cv2, numpy")
    mediapipe_ok = python_can(arguments.mediapipe_python, "import mediapipe, cv2")

    e2e, skin, tracker, notes = {}, {}, None, []
    for width, height in sizes:
        size = f"{width}x{height}"
        print(f"bench-table: end to end at {size} ...", file=sys.stderr)
        # Two rounds, best of each: the first render of a kind also pays for the driver's
        # pipeline compilation, which is not per-frame cost.
        output, error = run_json([arguments.velvet, "bench", "media", "--beauty", "--json", "--size", size,
                                  "--frames", str(arguments.frames), "--repeats", "2", "--work-dir", work] + device_arguments,
                                 f"bench media {size}", log)
        e2e[size] = json.loads(output.strip().splitlines()[-1]) if output else None
        if error:
            notes.append(error)

        print(f"bench-table: skin pipeline and filters at {size} ...", file=sys.stderr)
        if opencv_ok:
            result_path = os.path.join(work, f"skin-{size}.json")
            _, error = run_json([arguments.opencv_python, os.path.join(TOOLS, "bench-skin.py"), "--velvet", arguments.velvet,
                                 "--size", size, "--iterations", str(arguments.iterations), "--json", result_path]
                                + device_arguments, f"bench-skin {size}", log)
            if error:
                notes.append(error)
            else:
                with open(result_path) as handle:
                    skin[size] = json.load(handle)
        else:
            notes.append(f"skin anchors not measured: {arguments.opencv_python} cannot import cv2 (Tools/setup.sh --python)")

    print("bench-table: tracker ...", file=sys.stderr)
    tracker_python = arguments.mediapipe_python if mediapipe_ok else (arguments.opencv_python if opencv_ok else None)
    if tracker_python:
        result_path = os.path.join(work, "tracker.json")
        command = [tracker_python, os.path.join(TOOLS, "bench-tracker.py"), "--velvet", arguments.velvet, "--sizes",
                   arguments.sizes, "--frames", str(arguments.frames), "--mediapipe-python", tracker_python,
                   "--json", result_path] + device_arguments
        if not mediapipe_ok:
            command.append("--skip-mediapipe")
            notes.append(f"MediaPipe anchor not measured: {arguments.mediapipe_python} cannot import mediapipe "
                         "(Tools/setup.sh --python makes .venv-mediapipe)")
        _, error = run_json(command, "bench-tracker", log)
        if error:
            notes.append(error)
        else:
            with open(result_path) as handle:
                tracker = {f"{row['width']}x{row['height']}": row for row in json.load(handle)["rows"]}
    else:
        notes.append("tracker not measured: no Python with OpenCV to make its frame")

    device = next((r["device"] for r in e2e.values() if r), "?")
    lines = []
    today = datetime.date.today().isoformat()
    lines.append(f"Benchmark table, {today}: Velvet on {device}; CPU anchors on {platform.processor() or platform.machine()}, "
                 f"{os.cpu_count()} cores visible. Command: `Tools/bench-table.py --velvet {arguments.velvet} "
                 f"--sizes {arguments.sizes} --frames {arguments.frames}`.")
    lines.append("")
    lines.append("| size | measure | Velvet | anchor (same run, same input) | anchor value | ratio (> 1: Velvet ahead) |")
    lines.append("|---|---|---:|---|---:|---:|")
    for width, height in sizes:
        size = f"{width}x{height}"
        media = e2e.get(size)
        if media:
            plain = media["plain_fps"]
            lines.append(f"| {size} | passthrough fps (GPU in the path, no effect) | {fmt(media['passthrough_fps'], 1)} "
                         f"| plain transcode fps ({media['encoder']}) | {fmt(plain, 1)} | {ratio(media['passthrough_fps'], plain)} |")
            for method in ("freqsep", "bilateral"):
                result = media["beauty"].get(method)
                if result:
                    lines.append(f"| {size} | render fps, default preset, {method} | {fmt(result['fps'], 1)} "
                                 f"| plain transcode fps | {fmt(plain, 1)} | {ratio(result['fps'], plain)} |")
        else:
            lines.append(f"| {size} | render fps | not measured | | | |")
        result = skin.get(size)
        if result:
            for method, label in (("bilateral", "skin pipeline ms, bilateral (grid)"), ("freqsep", "skin pipeline ms, freqsep")):
                velvet_ms = result["velvet"].get(method, {}).get("median_ms")
                lines.append(f"| {size} | {label} | {fmt(velvet_ms)} | cv2.bilateralFilter(d=15, 30, 7.5) ms, "
                             f"{result['opencv_threads']} threads | {fmt(result['opencv_bilateral_ms'])} "
                             f"| {ratio(result['opencv_bilateral_ms'], velvet_ms)} |")
            velvet_ms = result["velvet"].get("bilateral", {}).get("median_ms")
            guided = result["opencv_guided_ms"]
            lines.append(f"| {size} | skin pipeline ms, bilateral | {fmt(velvet_ms)} | cv2.ximgproc.guidedFilter r=8 ms "
                         f"| {fmt(guided) if guided is not None else 'not measured (no contrib)'} | {ratio(guided, velvet_ms)} |")
            ffmpeg = result["ffmpeg_bilateral_ms"]
            lines.append(f"| {size} | skin pipeline ms, bilateral | {fmt(velvet_ms)} | FFmpeg `bilateral` filter ms "
                         f"| {fmt(ffmpeg) if ffmpeg is not None else 'not measured (no ffmpeg)'} | {ratio(ffmpeg, velvet_ms)} |")
        else:
            lines.append(f"| {size} | skin pipeline ms | not measured | | | |")
        row = (tracker or {}).get(size)
        if row:
            velvet = row["velvet"]
            mp = row["mediapipe"]
            mp_total = mp["both"] if mp else None
            lines.append(f"| {size} | tracker ms per frame, GPU (wall incl. round trips {fmt(velvet['wall_ms_median'])}) "
                         f"| {fmt(velvet['gpu_ms_median'])} | MediaPipe CPU mesh {fmt(mp['mesh']) if mp else '—'} + "
                         f"selfie {fmt(mp['selfie']) if mp else '—'} ms | "
                         f"{fmt(mp_total) if mp else 'not measured'} | {ratio(mp_total, velvet['wall_ms_median'])} (wall) |")
        else:
            lines.append(f"| {size} | tracker ms | not measured | | | |")

    lines.append("")
    lines.append("GPU ms per frame by stage, inside the end-to-end renders (GPU timestamps):")
    lines.append("")
    header = "| stage | " + " | ".join(f"{w}x{h} {m}" for w, h in sizes for m in ("freqsep", "bilateral")) + " |"
    lines.append(header)
    lines.append("|---|" + "---:|" * (2 * len(sizes)))
    columns = []
    for width, height in sizes:
        media = e2e.get(f"{width}x{height}")
        for method in ("freqsep", "bilateral"):
            result = (media or {}).get("beauty", {}).get(method)
            columns.append(dict(stage_groups(result["gpu_ms_per_frame"])) if result else {})
    for name, _ in stage_groups({}):
        lines.append(f"| {name} | " + " | ".join(fmt(column.get(name), 3) for column in columns) + " |")
    lines.append("")
    lines.append("Render threads: ms per frame each was busy (decode; GPU thread = recording, submitting and waiting "
                 "for the GPU; encode). The largest bounds the frame rate:")
    lines.append("")
    lines.append("| size | pipeline | decode | GPU thread | encode |")
    lines.append("|---|---|---:|---:|---:|")
    for width, height in sizes:
        media = e2e.get(f"{width}x{height}")
        if not media:
            continue
        threads = [("plain transcode", media.get("plain_busy_ms_per_frame", {})),
                   ("passthrough", media.get("passthrough_busy_ms_per_frame", {}))]
        threads += [(f"beauty {m}", media["beauty"][m].get("busy_ms_per_frame", {})) for m in ("freqsep", "bilateral")
                    if m in media["beauty"]]
        for name, busy in threads:
            lines.append(f"| {width}x{height} | {name} | {fmt(busy.get('decode'))} | {fmt(busy.get('gpu'))} | {fmt(busy.get('encode'))} |")
    if notes:
        lines.append("")
        lines.extend(f"- {note}" for note in notes)
    report = "\n".join(lines)
    print(report)
    if arguments.output:
        with open(arguments.output, "w") as handle:
            handle.write(report + "\n")
    print(f"bench-table: the commands' output is in {log_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
