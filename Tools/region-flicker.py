#!/usr/bin/env python3
"""Frame-to-frame change inside one mesh polygon of a video, out over in (M15b-style).

    Tools/region-flicker.py IN.mkv OUT.mkv TRACKS.json POINTS

POINTS: comma-separated mesh indices of the polygon, e.g. the inner lips
78,95,88,178,87,14,317,402,318,324,308,415,310,311,312,13,82,81,80,191. TRACKS.json is
`velvet analyze IN.mkv --json`; the polygon is frame 0's first face (a still clip). Prints the
mean absolute change of 8-bit RGB between consecutive frames, in and out, their ratio, and
the effect's mean size per frame (|out - in|). Needs ffmpeg and numpy (Tools/setup.sh --python).
"""
import json
import subprocess
import sys

import numpy as np


def frames(path, width, height):
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                         capture_output=True, check=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, height, width, 3).astype(float)


def inside(polygon, width, height):
    """Even-odd rule at pixel centres."""
    ys, xs = np.mgrid[0:height, 0:width]
    px, py = xs + 0.5, ys + 0.5
    result = np.zeros((height, width), bool)
    for (x1, y1), (x2, y2) in zip(polygon, np.roll(polygon, -1, axis=0)):
        result ^= ((y1 > py) != (y2 > py)) & (px < (x2 - x1) * (py - y1) / (y2 - y1 + 1e-12) + x1)
    return result


def main():
    source, output, tracks, points = sys.argv[1:5]
    track = json.load(open(tracks))
    width, height = track["width"], track["height"]
    before, after = frames(source, width, height), frames(output, width, height)
    landmarks = np.array(track["frames"][0]["faces"][0]["landmarks"])[:, :2]
    region = inside(landmarks[[int(i) for i in points.split(",")]], width, height)
    change_in = np.abs(np.diff(before, axis=0))[:, region].mean()
    change_out = np.abs(np.diff(after, axis=0))[:, region].mean()
    effect = np.abs(after - before)[:, region].mean(axis=(1, 2))
    print(f"{region.sum()} px: change in {change_in:.3f}, out {change_out:.3f}, ratio {change_out / change_in:.3f}; "
          f"effect per frame {effect.min():.1f}-{effect.max():.1f} levels")


if __name__ == "__main__":
    main()
