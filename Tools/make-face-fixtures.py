#!/usr/bin/env python3
"""Writes the face fixtures the beauty tests use as geometry input.

Runs MediaPipe 0.10.21's Python FaceMesh (static_image_mode=True, refine_landmarks=False)
and SelfieSegmentation (model_selection=0) on each test photo and writes
Tests/Fixtures/<name>.face.json:

    {"image": "astronaut", "width": 512, "height": 512,
     "generator": "mediapipe 0.10.21 ...",
     "faces": [{"landmarks": [[x, y, z], ... 468 points]}],   # x, y in pixels, top-left origin, y down;
                                                                # z in MediaPipe's units scaled by width
     "person_mask": {"width": 128, "height": 128, "encoding": "base64-u8",
                     "data": "..."}}                           # probability * 255, rows top to bottom,
                                                                # the whole frame stretched to 128x128

The photos come from Tools/fetch-test-assets.sh (raw RGBA next to the originals). MediaPipe
runs in its own venv, never in the project's:

    Tools/setup.sh --python --assets      # makes .venv-mediapipe (mediapipe 0.10.21)
    .venv-mediapipe/bin/python Tools/make-face-fixtures.py [--assets DIR] [--out Tests/Fixtures]
"""
import argparse
import base64
import json
import os
import sys

import numpy as np

from fixture_photos import DEFAULT_ASSETS, PHOTOS, ROOT, load_rgba, require_mediapipe
MASK_SIZE = 128


def resize_bilinear(mask, width, height):
    """Pixel-centre bilinear resampling (no OpenCV needed), clamped at the border."""
    source_height, source_width = mask.shape
    xs = (np.arange(width) + 0.5) * source_width / width - 0.5
    ys = (np.arange(height) + 0.5) * source_height / height - 0.5
    x0 = np.clip(np.floor(xs).astype(int), 0, source_width - 1)
    y0 = np.clip(np.floor(ys).astype(int), 0, source_height - 1)
    x1 = np.clip(x0 + 1, 0, source_width - 1)
    y1 = np.clip(y0 + 1, 0, source_height - 1)
    fx = np.clip(xs - x0, 0, 1)[None, :]
    fy = np.clip(ys - y0, 0, 1)[:, None]
    top = mask[y0][:, x0] * (1 - fx) + mask[y0][:, x1] * fx
    bottom = mask[y1][:, x0] * (1 - fx) + mask[y1][:, x1] * fx
    return top * (1 - fy) + bottom * fy


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assets", default=DEFAULT_ASSETS)
    parser.add_argument("--out", default=os.path.join(ROOT, "Tests", "Fixtures"))
    arguments = parser.parse_args()

    mp = require_mediapipe("make-face-fixtures")
    if mp is None:
        return 1

    os.makedirs(arguments.out, exist_ok=True)
    for name in PHOTOS:
        rgb = np.ascontiguousarray(load_rgba(arguments.assets, name)[:, :, :3])
        height, width = rgb.shape[:2]
        with mp.solutions.face_mesh.FaceMesh(static_image_mode=True, max_num_faces=4,
                                             refine_landmarks=False) as mesh:
            result = mesh.process(rgb)
        faces = []
        for face in result.multi_face_landmarks or []:
            points = [[round(p.x * width, 3), round(p.y * height, 3), round(p.z * width, 3)] for p in face.landmark]
            faces.append({"landmarks": points})
        with mp.solutions.selfie_segmentation.SelfieSegmentation(model_selection=0) as segmentation:
            probability = segmentation.process(rgb).segmentation_mask.astype(np.float32)
        small = resize_bilinear(probability, MASK_SIZE, MASK_SIZE)
        encoded = np.clip(np.rint(small * 255), 0, 255).astype(np.uint8)
        fixture = {
            "image": name, "width": width, "height": height,
            "generator": "mediapipe 0.10.21 FaceMesh(static_image_mode=True, refine_landmarks=False), "
                         "SelfieSegmentation(model_selection=0)",
            "faces": faces,
            "person_mask": {"width": MASK_SIZE, "height": MASK_SIZE, "encoding": "base64-u8",
                            "data": base64.b64encode(encoded.tobytes()).decode("ascii")},
        }
        path = os.path.join(arguments.out, name + ".face.json")
        with open(path, "w") as handle:
            json.dump(fixture, handle, separators=(",", ":"))
        print(f"make-face-fixtures: {name}: {len(faces)} face(s) -> {path} ({os.path.getsize(path)} B)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
