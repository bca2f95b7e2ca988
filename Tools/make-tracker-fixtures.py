#!/usr/bin/env python3
"""Writes the face-tracker fixtures: MediaPipe's detections and full-resolution person masks.

Runs MediaPipe 0.10.21's Python FaceDetection (model_selection 0 = short range and 1 = full
range, min_detection_confidence 0.5) and SelfieSegmentation (model_selection 0, the mask at
the photo's own size) on each test photo and writes Tests/Fixtures/<name>.tracker.json:

    {"image": "astronaut", "width": 512, "height": 512, "generator": "...",
     "detections": {"short": [D, ...], "full": [D, ...]},
        # D = {"score": s, "box": [xmin, ymin, width, height], "keypoints": [[x, y] x 6]}, pixels
     "person_mask": {"threshold": 0.5, "encoding": "row-runs",
                     "rows": [[start, end, start, end, ...], ...]}}
        # per row (top to bottom): the half-open column ranges where probability > 0.5

The landmarks for M1 are in <name>.face.json (Tools/make-face-fixtures.py). MediaPipe runs
in its own venv, never in the project's:

    python3 -m venv /tmp/mp-venv && /tmp/mp-venv/bin/pip install mediapipe==0.10.21
    /tmp/mp-venv/bin/python Tools/make-tracker-fixtures.py [--assets DIR] [--out Tests/Fixtures]
"""
import argparse
import json
import os
import sys

import numpy as np

PHOTOS = ["astronaut", "grace_hopper"]


def load_rgba(assets, name):
    with open(os.path.join(assets, name + ".size")) as handle:
        width, height = (int(v) for v in handle.read().strip().split("x"))
    rgba = np.fromfile(os.path.join(assets, name + ".rgba"), dtype=np.uint8)
    return rgba.reshape(height, width, 4)


def detections(mp, rgb, model_selection):
    height, width = rgb.shape[:2]
    with mp.solutions.face_detection.FaceDetection(model_selection=model_selection,
                                                   min_detection_confidence=0.5) as detector:
        result = detector.process(rgb)
    found = []
    for detection in result.detections or []:
        box = detection.location_data.relative_bounding_box
        found.append({
            "score": round(float(detection.score[0]), 5),
            "box": [round(box.xmin * width, 4), round(box.ymin * height, 4),
                    round(box.width * width, 4), round(box.height * height, 4)],
            "keypoints": [[round(k.x * width, 4), round(k.y * height, 4)]
                          for k in detection.location_data.relative_keypoints],
        })
    return found


def row_runs(mask):
    """Half-open [start, end) column ranges of True, per row."""
    rows = []
    for row in mask:
        padded = np.concatenate([[False], row, [False]]).astype(np.int8)
        edges = np.flatnonzero(np.diff(padded))
        rows.append([int(e) for e in edges])
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--assets", default=os.environ.get("VELVET_TEST_ASSETS", os.path.join(root, "test-assets")))
    parser.add_argument("--out", default=os.path.join(root, "Tests", "Fixtures"))
    arguments = parser.parse_args()

    import mediapipe as mp  # imported late so --help works without it
    if mp.__version__ != "0.10.21":
        print(f"make-tracker-fixtures: needs mediapipe 0.10.21, found {mp.__version__}", file=sys.stderr)
        return 1

    os.makedirs(arguments.out, exist_ok=True)
    for name in PHOTOS:
        rgb = np.ascontiguousarray(load_rgba(arguments.assets, name)[:, :, :3])
        height, width = rgb.shape[:2]
        with mp.solutions.selfie_segmentation.SelfieSegmentation(model_selection=0) as segmentation:
            probability = segmentation.process(rgb).segmentation_mask.astype(np.float32)
        fixture = {
            "image": name, "width": width, "height": height,
            "generator": "mediapipe 0.10.21 FaceDetection(model_selection=0|1, min_detection_confidence=0.5), "
                         "SelfieSegmentation(model_selection=0)",
            "detections": {"short": detections(mp, rgb, 0), "full": detections(mp, rgb, 1)},
            "person_mask": {"threshold": 0.5, "encoding": "row-runs", "rows": row_runs(probability > 0.5)},
        }
        path = os.path.join(arguments.out, name + ".tracker.json")
        with open(path, "w") as handle:
            json.dump(fixture, handle, separators=(",", ":"))
        counts = {k: len(v) for k, v in fixture["detections"].items()}
        print(f"make-tracker-fixtures: {name}: detections {counts} -> {path} ({os.path.getsize(path)} B)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
