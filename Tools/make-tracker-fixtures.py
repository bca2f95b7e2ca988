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

    Tools/setup.sh --python --assets      # makes .venv-mediapipe (mediapipe 0.10.21)
    .venv-mediapipe/bin/python Tools/make-tracker-fixtures.py [--assets DIR] [--out Tests/Fixtures]
"""
import argparse
import json
import os
import sys

import numpy as np

from fixture_photos import DEFAULT_ASSETS, PHOTOS, ROOT, load_rgba, require_mediapipe


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
    parser.add_argument("--assets", default=DEFAULT_ASSETS)
    parser.add_argument("--out", default=os.path.join(ROOT, "Tests", "Fixtures"))
    arguments = parser.parse_args()

    mp = require_mediapipe("make-tracker-fixtures")
    if mp is None:
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
