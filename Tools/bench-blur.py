#!/usr/bin/env python3
"""Gaussian blur benchmark: Velvet's GPU kernel vs OpenCV's cv2.GaussianBlur, same image, same run.

Prints a Markdown table (paste into docs/PERFORMANCE.md). Velvet's time is the GPU
timestamp of both passes (median); OpenCV's is wall time of cv2.GaussianBlur on the CPU
(median, OpenCV's default thread count). Both use the same kernel: radius ceil(3 sigma),
replicated border. The table also gives the largest pixel difference between the two.

    .venv/bin/python Tools/bench-blur.py --velvet .build/release/velvet [--sigma 12] [--size 1920x1080]
"""
import argparse
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time

import cv2
import numpy as np


def test_image(width, height):
    """Deterministic photo-like content: smooth gradients, hard edges and grain."""
    rng = np.random.default_rng(12)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    base = np.stack([x / width, y / height, 0.5 + 0.5 * np.sin(x / 37.0) * np.cos(y / 23.0)], axis=-1)
    edges = ((x // 97 + y // 61) % 2)[..., None] * 0.25
    grain = rng.normal(0, 0.04, size=(height, width, 3))
    rgb = np.clip(base * 0.7 + edges + grain, 0, 1)
    rgba = np.concatenate([rgb, np.ones((height, width, 1))], axis=-1)
    return (rgba * 255 + 0.5).astype(np.uint8)


def time_opencv(image, sigma, iterations):
    radius = math.ceil(3 * sigma)
    ksize = (2 * radius + 1, 2 * radius + 1)
    result = cv2.GaussianBlur(image, ksize, sigmaX=sigma, sigmaY=sigma, borderType=cv2.BORDER_REPLICATE)
    samples = []
    for _ in range(iterations):
        start = time.perf_counter()
        result = cv2.GaussianBlur(image, ksize, sigmaX=sigma, sigmaY=sigma, borderType=cv2.BORDER_REPLICATE)
        samples.append((time.perf_counter() - start) * 1000)
    return float(np.median(samples)), result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--velvet", required=True, help="path to the velvet binary")
    parser.add_argument("--sigma", type=float, default=12.0)
    parser.add_argument("--size", default="1920x1080")
    parser.add_argument("--iterations", type=int, default=20)
    arguments = parser.parse_args()
    width, height = (int(v) for v in arguments.size.lower().split("x"))

    image = test_image(width, height)
    opencv_ms, opencv_result = time_opencv(image, arguments.sigma, arguments.iterations)
    with tempfile.TemporaryDirectory() as directory:
        source = os.path.join(directory, "in.rgba")
        output = os.path.join(directory, "out.rgba")
        image.tofile(source)
        completed = subprocess.run(
            [arguments.velvet, "bench", "blur", "--width", str(width), "--height", str(height),
             "--sigma", str(arguments.sigma), "--iterations", str(arguments.iterations),
             "--input", source, "--output", output],
            check=True, capture_output=True, text=True)
        velvet = json.loads(completed.stdout.strip().splitlines()[-1])
        velvet_result = np.fromfile(output, dtype=np.uint8).reshape(height, width, 4)
    difference = int(np.abs(velvet_result.astype(int) - opencv_result.astype(int)).max())

    cpu = platform.processor() or platform.machine()
    print(f"Gaussian blur, sigma {arguments.sigma:g}, {width}x{height} rgba8, median of {arguments.iterations}")
    print()
    print("| device | Velvet GPU ms | OpenCV CPU ms | OpenCV threads | speed vs OpenCV | max pixel diff |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| {velvet['device']} | {velvet['median_ms']:.2f} | {opencv_ms:.2f} | {cv2.getNumThreads()} "
          f"| {opencv_ms / velvet['median_ms']:.2f}x | {difference} |")
    print()
    print(f"(OpenCV {cv2.__version__} on {os.cpu_count()} CPUs, {cpu}; ratio = OpenCV ms / Velvet ms, >1 means Velvet is faster)")


if __name__ == "__main__":
    sys.exit(main())
