#!/usr/bin/env python3
"""Face-model inference benchmark: Velvet's Vulkan kernels vs LiteRT + XNNPACK on one CPU thread, same run.

Prints a Markdown table (paste into docs/PERFORMANCE.md). Velvet's time is the GPU
timestamp span of one recorded inference (`velvet bench nn`, median after warm-up);
LiteRT's is the wall time of Interpreter.invoke() with the default XNNPACK delegate and
num_threads=1 (median after warm-up). Both run the same .tflite files.

    .venv/bin/python Tools/bench-nn.py --velvet .build/release/velvet [--models models] [--iterations 50]
"""
import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time

import numpy as np
from ai_edge_litert.interpreter import Interpreter

MODELS = ["face_detection_short_range", "face_detection_full_range_sparse", "face_landmark",
          "selfie_segmentation", "selfie_segmentation_landscape"]


def time_litert(path, iterations, warmup):
    interpreter = Interpreter(model_path=path, num_threads=1)
    interpreter.allocate_tensors()
    detail = interpreter.get_input_details()[0]
    rng = np.random.default_rng(5)
    interpreter.set_tensor(detail["index"], rng.uniform(-1, 1, detail["shape"]).astype(np.float32))
    samples = []
    for index in range(warmup + iterations):
        start = time.perf_counter()
        interpreter.invoke()
        elapsed = (time.perf_counter() - start) * 1000
        if index >= warmup:
            samples.append(elapsed)
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--velvet", required=True, help="path to the velvet binary")
    parser.add_argument("--subcommand", default="bench nn",
                        help="words between the binary and the options (default 'bench nn')")
    parser.add_argument("--models", default=os.environ.get("VELVET_MODELS_DIR", os.path.join(root, "models")))
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--device", help="Vulkan device index or name for Velvet")
    arguments = parser.parse_args()

    command = [arguments.velvet] + shlex.split(arguments.subcommand) + [
        "--models", arguments.models, "--iterations", str(arguments.iterations), "--warmup", str(arguments.warmup)]
    if arguments.device:
        command += ["--device", arguments.device]
    completed = subprocess.run(command, check=True, capture_output=True, text=True)
    velvet = json.loads(completed.stdout.strip().splitlines()[-1])
    gpu = {entry["model"]: entry for entry in velvet["models"]}

    print(f"Face models, one inference, median of {arguments.iterations} after {arguments.warmup} warm-up runs")
    print()
    print("| model | Velvet GPU ms | LiteRT CPU ms | ratio | Velvet launches |")
    print("|---|---:|---:|---:|---:|")
    for name in MODELS:
        litert_ms = time_litert(os.path.join(arguments.models, name + ".tflite"), arguments.iterations, arguments.warmup)
        velvet_ms = gpu[name]["median_ms"]
        print(f"| {name} | {velvet_ms:.3f} | {litert_ms:.3f} | {litert_ms / velvet_ms:.2f}x | {gpu[name]['launches']} |")
    print()
    cpu = platform.processor() or platform.machine()
    print(f"(Velvet on {velvet['device']}; LiteRT + XNNPACK, 1 thread, on {cpu} with {os.cpu_count()} CPUs; "
          "ratio = LiteRT ms / Velvet ms, >1 means Velvet is faster)")


if __name__ == "__main__":
    sys.exit(main())
