#!/usr/bin/env python3
"""Face tracker cost per frame: velvet (GPU) beside MediaPipe's CPU face mesh + selfie segmentation.

For each frame size (720p and 1080p by default) the script makes one frame with a face (the
astronaut photo scaled to the frame height, centred on a grey background), then times:

  * velvet:    `velvet bench tracker --input FRAME.png` (tracking mode, one face, segmentation
               every frame; wall-clock ms per frame, GPU round trips included, and GPU ms);
  * MediaPipe: mediapipe 0.10.21 FaceMesh(static_image_mode=False, max_num_faces=1,
               refine_landmarks=False) + SelfieSegmentation on the same frame, same run,
               single process on the CPU (its venv: --mediapipe-python).

and prints a Markdown table. The selfie model matches velvet's choice for the frame
(landscape for 16:9 frames: MediaPipe's model_selection=1).

    Tools/bench-tracker.py --velvet .build/release/velvet [--sizes 1280x720,1920x1080]
        [--frames 100] [--mediapipe-python .venv-mediapipe/bin/python] [--device D] [--json RESULTS.json]
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_frame(assets, width, height, path):
    """The astronaut photo scaled to the frame height, centred on grey, written as PNG."""
    import numpy as np
    import cv2
    with open(os.path.join(assets, "astronaut.size")) as handle:
        pw, ph = (int(v) for v in handle.read().strip().split("x"))
    photo = np.fromfile(os.path.join(assets, "astronaut.rgba"), dtype=np.uint8).reshape(ph, pw, 4)[:, :, :3]
    side = height
    scaled = cv2.resize(photo, (side * pw // ph, side), interpolation=cv2.INTER_LINEAR)
    frame = np.full((height, width, 3), 128, dtype=np.uint8)
    x0 = (width - scaled.shape[1]) // 2
    frame[:, x0:x0 + scaled.shape[1]] = scaled
    cv2.imwrite(path, cv2.cvtColor(frame, cv2.COLOR_RGB2BGR))


def mediapipe_worker(arguments):
    """Runs inside the MediaPipe venv: prints one JSON line of per-frame times."""
    import cv2
    import mediapipe as mp
    import numpy as np
    frame = cv2.cvtColor(cv2.imread(arguments.frame), cv2.COLOR_BGR2RGB)
    frame = np.ascontiguousarray(frame)
    results = {}
    with mp.solutions.face_mesh.FaceMesh(static_image_mode=False, max_num_faces=1, refine_landmarks=False) as mesh, \
            mp.solutions.selfie_segmentation.SelfieSegmentation(model_selection=arguments.selfie_model) as selfie:
        timings = {"mesh": [], "selfie": [], "both": []}
        faces = 0
        for index in range(arguments.warmup + arguments.frames):
            start = time.perf_counter()
            found = mesh.process(frame)
            middle = time.perf_counter()
            selfie.process(frame)
            end = time.perf_counter()
            if index >= arguments.warmup:
                timings["mesh"].append((middle - start) * 1e3)
                timings["selfie"].append((end - middle) * 1e3)
                timings["both"].append((end - start) * 1e3)
                faces = len(found.multi_face_landmarks or [])
        for key, values in timings.items():
            results[key] = sorted(values)[len(values) // 2]
        results["faces"] = faces
    print(json.dumps(results))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--velvet", required=False, help="path to the velvet binary (a release build)")
    parser.add_argument("--sizes", default="1280x720,1920x1080")
    parser.add_argument("--frames", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--device", default=None)
    parser.add_argument("--models", default=os.path.join(ROOT, "models"))
    parser.add_argument("--assets", default=os.environ.get("VELVET_TEST_ASSETS", os.path.join(ROOT, "test-assets")))
    parser.add_argument("--mediapipe-python", default=os.path.join(ROOT, ".venv-mediapipe", "bin", "python"))
    parser.add_argument("--skip-mediapipe", action="store_true")
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    # Internal: the MediaPipe side, run in its venv.
    parser.add_argument("--mediapipe-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--frame", help=argparse.SUPPRESS)
    parser.add_argument("--selfie-model", type=int, default=0, help=argparse.SUPPRESS)
    arguments = parser.parse_args()

    if arguments.mediapipe_worker:
        mediapipe_worker(arguments)
        return 0
    if not arguments.velvet:
        parser.error("--velvet PATH is required")

    rows = []
    device = "?"
    with tempfile.TemporaryDirectory() as scratch:
        for size in arguments.sizes.split(","):
            width, height = (int(v) for v in size.split("x"))
            frame = os.path.join(scratch, f"frame-{width}x{height}.png")
            # The frame is made with the MediaPipe venv's OpenCV (the project venv may lack it).
            subprocess.run([arguments.mediapipe_python, "-c",
                            f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
                            f"import importlib.util as u; s = u.spec_from_file_location('bt', {os.path.abspath(__file__)!r}); "
                            f"m = u.module_from_spec(s); s.loader.exec_module(m); "
                            f"m.make_frame({arguments.assets!r}, {width}, {height}, {frame!r})"], check=True)
            command = [arguments.velvet, "bench", "tracker", "--input", frame, "--frames", str(arguments.frames),
                       "--warmup", str(arguments.warmup), "--models", arguments.models]
            if arguments.device:
                command += ["--device", arguments.device]
            velvet = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
            device = velvet["device"]
            mp_result = None
            if not arguments.skip_mediapipe:
                selfie = 1 if velvet.get("segmentation_model") == "landscape" else 0
                output = subprocess.run([arguments.mediapipe_python, os.path.abspath(__file__), "--mediapipe-worker",
                                         "--frame", frame, "--frames", str(arguments.frames), "--warmup",
                                         str(arguments.warmup), "--selfie-model", str(selfie)],
                                        check=True, capture_output=True, text=True).stdout
                mp_result = json.loads(output.strip().splitlines()[-1])
            rows.append((width, height, velvet, mp_result))

    print(f"Face tracker per frame, tracking mode, one face, segmentation every frame; "
          f"velvet on {device}, MediaPipe 0.10.21 on the CPU ({platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores visible); medians of {arguments.frames} frames.\n")
    print("| frame | velvet wall ms | velvet GPU ms | GPU submits/frame | selfie model | MediaPipe mesh ms | "
          "MediaPipe selfie ms | MediaPipe total ms | speed-up (wall) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for width, height, velvet, mp_result in rows:
        mp_cells = ["-", "-", "-", "-"]
        if mp_result:
            mp_cells = [f"{mp_result['mesh']:.2f}", f"{mp_result['selfie']:.2f}", f"{mp_result['both']:.2f}",
                        f"{mp_result['both'] / velvet['wall_ms_median']:.2f}x"]
        print(f"| {width}x{height} | {velvet['wall_ms_median']:.2f} | {velvet['gpu_ms_median']:.2f} | "
              f"{velvet['submissions_per_frame']:.2f} | {velvet['segmentation_model']} | " + " | ".join(mp_cells) + " |")
    if arguments.json:
        with open(arguments.json, "w") as handle:
            json.dump({"device": device, "frames": arguments.frames, "cpus": os.cpu_count(),
                       "rows": [{"width": w, "height": h, "velvet": v, "mediapipe": m} for w, h, v, m in rows]},
                      handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
