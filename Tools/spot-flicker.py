#!/usr/bin/env python3
"""Flicker at the spot fills of a video: how much the output changes from frame to frame at the
pixels spot removal filled, against the input and a render without spot removal.

    Tools/spot-flicker.py IN.mkv NO_SPOTS.mkv WITH_SPOTS.mkv [MORE.mkv ...]

NO_SPOTS.mkv is `velvet render IN.mkv -o NO_SPOTS.mkv --codec ffv1 --spots 0`, each WITH_SPOTS the
same render with spot removal (e.g. two binaries, or two settings). The spot pixels are those where
any WITH_SPOTS render differs from NO_SPOTS by more than 3 levels in some frame. Prints, over those
pixels, the mean absolute frame-to-frame change of 8-bit RGB of the input, of NO_SPOTS and of each
render, and for each render the mean fill (|render - NO_SPOTS|, largest channel) and how often a
pixel's fill turns on or off between two frames (over 2 levels in one, under 0.5 in the other).
Needs ffmpeg, ffprobe and numpy (Tools/setup.sh --python).
"""
import subprocess
import sys

import numpy as np


def size(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                          "-of", "csv=p=0", path], capture_output=True, check=True, text=True).stdout
    width, height = out.strip().split(",")[:2]
    return int(width), int(height)


def frames(path, width, height):
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                         capture_output=True, check=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, height, width, 3).astype(float)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    source, plain, renders = sys.argv[1], sys.argv[2], sys.argv[3:]
    width, height = size(source)
    before, without = frames(source, width, height), frames(plain, width, height)
    after = [frames(path, width, height) for path in renders]
    spots = np.zeros((height, width), bool)
    for video in after:
        spots |= np.abs(video - without).max(axis=3).max(axis=0) > 3
    if not spots.any():
        sys.exit("no spot fills found")

    def change(video):
        return np.abs(np.diff(video, axis=0))[:, spots].mean()

    print(f"{spots.sum()} spot px over {len(before)} frames: change in {change(before):.2f}, without spots {change(without):.2f}")
    for path, video in zip(renders, after):
        fill = np.abs(video - without).max(axis=3)[:, spots]
        on, off = fill > 2, fill < 0.5
        flips = ((on[1:] & off[:-1]) | (off[1:] & on[:-1])).sum() / spots.sum() / (len(fill) - 1)
        print(f"{path}: change {change(video):.2f}, mean fill {fill.mean():.2f}, on/off flips {flips:.3f} per px per frame")


if __name__ == "__main__":
    main()
