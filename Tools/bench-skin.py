#!/usr/bin/env python3
"""Skin pipeline benchmark: Velvet's GPU skin stages vs OpenCV's CPU filters, same frame, same run.

Builds a 1080p frame from a test photo (scaled to the frame height, centred, edges
replicated) with its MediaPipe face fixture moved along, then times:

  - Velvet `bench skin`: mask + zones + spot removal + smoothing + blend per frame (GPU
    timestamps, median), for bilateral (grid) and frequency separation;
  - cv2.bilateralFilter(d=15, sigmaColor=30, sigmaSpace=7.5) on the whole frame;
  - cv2.ximgproc.guidedFilter(radius=8, eps=(0.1*255)^2) on the whole frame;
  - FFmpeg's `bilateral` filter (sigmaS=7.5, sigmaR=30/255, all planes) on the same frame,
    through the ffmpeg CLI: the time with the filter minus the time without, per frame;

and prints a Markdown table (paste into docs/PERFORMANCE.md). OpenCV's time is wall time
with its default thread count. The table also says whether pixels far from the face came
back bit-exact.

    Tools/fetch-test-assets.sh
    Tools/setup.sh --python                # makes .venv (OpenCV with contrib)
    .venv/bin/python Tools/bench-skin.py --velvet .build/release/velvet [--photo grace_hopper] [--size 1920x1080]
        [--json RESULTS.json]
"""
import argparse
import base64
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import cv2
import numpy as np

from fixture_photos import DEFAULT_ASSETS, ROOT, load_rgba


def build_frame(photo, fixture, width, height):
    """The photo scaled to the frame height and centred; landmarks and mask follow."""
    scale = height / photo.shape[0]
    scaled_width = int(round(photo.shape[1] * scale))
    if scaled_width > width:
        scale = width / photo.shape[1]
        scaled_width = width
    scaled_height = int(round(photo.shape[0] * scale))
    left, top = (width - scaled_width) // 2, (height - scaled_height) // 2
    scaled = cv2.resize(photo, (scaled_width, scaled_height), interpolation=cv2.INTER_LINEAR)
    frame = cv2.copyMakeBorder(scaled, top, height - scaled_height - top, left, width - scaled_width - left,
                               cv2.BORDER_REPLICATE)
    faces = [{"landmarks": [[x * scale + left, y * scale + top, z * scale] for x, y, z in face["landmarks"]]}
             for face in fixture["faces"]]
    mask_info = fixture["person_mask"]
    mask = np.frombuffer(base64.b64decode(mask_info["data"]), dtype=np.uint8).reshape(
        mask_info["height"], mask_info["width"]).astype(np.float32)
    mask_scaled = cv2.resize(mask, (scaled_width, scaled_height), interpolation=cv2.INTER_LINEAR)
    canvas = np.zeros((height, width), dtype=np.float32)
    canvas[top:top + scaled_height, left:left + scaled_width] = mask_scaled
    small = cv2.resize(canvas, (256, 256), interpolation=cv2.INTER_AREA)
    person = {"width": 256, "height": 256, "encoding": "base64-u8",
              "data": base64.b64encode(np.clip(np.rint(small), 0, 255).astype(np.uint8).tobytes()).decode("ascii")}
    return np.ascontiguousarray(frame), {"width": width, "height": height, "faces": faces, "person_mask": person}


def median_ms(function, iterations):
    function()
    samples = []
    for _ in range(iterations):
        start = time.perf_counter()
        function()
        samples.append((time.perf_counter() - start) * 1000)
    return float(np.median(samples))


def ffmpeg_bilateral_ms(frame, directory, repeats):
    """Per-frame ms of FFmpeg's bilateral filter on `frame`, or None without an ffmpeg CLI.

    The frame is fed `repeats` times as raw video; both runs convert to planar RGB (the
    filter's format), so the difference is the filter alone. Best of three runs each."""
    import shutil
    if shutil.which("ffmpeg") is None:
        return None
    height, width = frame.shape[:2]
    source = os.path.join(directory, "ffmpeg-frame.rgba")
    frame.tofile(source)

    def seconds(filters):
        command = ["ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgba",
                   "-s", f"{width}x{height}", "-stream_loop", str(repeats - 1), "-i", source, "-vf", filters,
                   "-f", "null", "-"]
        best = None
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run(command, check=True)
            elapsed = time.perf_counter() - start
            best = elapsed if best is None else min(best, elapsed)
        return best

    with_filter = seconds(f"format=gbrp,bilateral=sigmaS=7.5:sigmaR={30 / 255:.4f}:planes=7")
    without = seconds("format=gbrp")
    return max(with_filter - without, 0.0) / repeats * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--velvet", required=True, help="path to the velvet binary (with `bench skin`)")
    parser.add_argument("--photo", default="grace_hopper", choices=["grace_hopper", "astronaut"])
    parser.add_argument("--assets", default=DEFAULT_ASSETS)
    parser.add_argument("--size", default="1920x1080")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--device", default=None, help="Velvet device index or name")
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    parser.add_argument("--skip-ffmpeg", action="store_true", help="leave out FFmpeg's bilateral filter")
    arguments = parser.parse_args()
    width, height = (int(v) for v in arguments.size.lower().split("x"))

    with open(os.path.join(ROOT, "Tests", "Fixtures", arguments.photo + ".face.json")) as handle:
        fixture = json.load(handle)
    frame, faces = build_frame(load_rgba(arguments.assets, arguments.photo), fixture, width, height)
    bgr = np.ascontiguousarray(frame[:, :, 2::-1])

    opencv_bilateral = median_ms(lambda: cv2.bilateralFilter(bgr, 15, 30, 7.5), arguments.iterations)
    if hasattr(cv2, "ximgproc"):
        opencv_guided = median_ms(lambda: cv2.ximgproc.guidedFilter(bgr, bgr, 8, (0.1 * 255) ** 2), arguments.iterations)
    else:
        opencv_guided = None  # opencv-contrib is missing: reported as such, never as a number

    with tempfile.TemporaryDirectory() as directory:
        source = os.path.join(directory, "frame.rgba")
        faces_path = os.path.join(directory, "faces.json")
        prefix = os.path.join(directory, "out")
        frame.tofile(source)
        with open(faces_path, "w") as handle:
            json.dump(faces, handle)
        command = [arguments.velvet, "bench", "skin", "--width", str(width), "--height", str(height),
                   "--input", source, "--faces", faces_path, "--iterations", str(arguments.iterations),
                   "--output", prefix, "--method", "both"]
        if arguments.device is not None:
            command += ["--device", arguments.device]
        completed = subprocess.run(command, check=True, capture_output=True, text=True)
        velvet = json.loads(completed.stdout.strip().splitlines()[-1])
        outputs = {method: np.fromfile(f"{prefix}-{method}.rgba", dtype=np.uint8).reshape(height, width, 4)
                   for method in velvet["methods"]}
        ffmpeg_bilateral = None if arguments.skip_ffmpeg else ffmpeg_bilateral_ms(frame, directory, arguments.iterations)

    # Pixels farther than one face size from the face centre must come back untouched.
    points = np.array(faces["faces"][0]["landmarks"])[:, :2]
    centre = (points.min(0) + points.max(0)) / 2
    face_size = (points.max(0) - points.min(0)).max()
    ys, xs = np.mgrid[0:height, 0:width]
    far = np.hypot(xs - centre[0], ys - centre[1]) > face_size
    untouched = {method: int(np.abs(out.astype(int) - frame.astype(int))[far].max()) for method, out in outputs.items()}

    cpu = platform.processor() or platform.machine()
    print(f"Skin pipeline per {width}x{height} frame ({arguments.photo} scaled, face {face_size:.0f} px), "
          f"median of {arguments.iterations}")
    print()
    print("| what | device | ms per frame | vs cv2.bilateralFilter | note |")
    print("|---|---|---:|---:|---|")
    labels = {"bilateral": "Velvet skin pipeline, bilateral (grid)", "freqsep": "Velvet skin pipeline, frequency separation"}
    for method, result in velvet["methods"].items():
        sections = ", ".join(f"{k.replace('skin.', '')} {v:.2f}" for k, v in sorted(result["sections"].items()))
        print(f"| {labels.get(method, method)} | {velvet['device']} | {result['median_ms']:.2f} "
              f"| {opencv_bilateral / result['median_ms']:.1f}x faster | {sections}; far pixels max diff "
              f"{untouched[method]} |")
    print(f"| cv2.bilateralFilter(d=15, 30, 7.5) | CPU | {opencv_bilateral:.2f} | 1.0x | whole frame |")
    if ffmpeg_bilateral is None:
        print("| FFmpeg bilateral filter | CPU | not measured | | no ffmpeg CLI |")
    else:
        print(f"| FFmpeg bilateral filter (sigmaS 7.5, sigmaR 30/255) | CPU | {ffmpeg_bilateral:.2f} | "
              f"{opencv_bilateral / ffmpeg_bilateral:.1f}x | whole frame, gbrp, ffmpeg CLI threads |")
    if opencv_guided is None:
        print("| cv2.ximgproc.guidedFilter r=8 | CPU | not measured | | install opencv-contrib-python-headless |")
    else:
        print(f"| cv2.ximgproc.guidedFilter r=8 | CPU | {opencv_guided:.2f} | {opencv_bilateral / opencv_guided:.1f}x "
              f"| whole frame, eps (0.1*255)^2 |")
    print()
    print(f"(OpenCV {cv2.__version__} with {cv2.getNumThreads()} threads on {os.cpu_count()} CPUs, {cpu}; "
          f"Velvet times are GPU timestamps of the recorded stages)")
    if arguments.json:
        with open(arguments.json, "w") as handle:
            json.dump({"width": width, "height": height, "photo": arguments.photo, "face_px": float(face_size),
                       "device": velvet["device"], "velvet": velvet["methods"], "far_pixels_max_diff": untouched,
                       "opencv_bilateral_ms": opencv_bilateral, "opencv_guided_ms": opencv_guided,
                       "opencv_threads": cv2.getNumThreads(), "ffmpeg_bilateral_ms": ffmpeg_bilateral,
                       "cpus": os.cpu_count()}, handle, indent=1)


if __name__ == "__main__":
    sys.exit(main())
