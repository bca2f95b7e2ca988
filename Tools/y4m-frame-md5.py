#!/usr/bin/env python3
"""One MD5 per frame of a y4m stream on stdin, one per line: for comparing renders on a machine
without ffmpeg (the GPU nodes), e.g.

    velvet render clip.mp4 -o - --format y4m --quiet | Tools/y4m-frame-md5.py > frames.txt
"""
import hashlib
import sys

# Frames start with "FRAME" and optional parameters up to a newline; the stream header is first.
data = sys.stdin.buffer.read()
for frame in data.split(b"FRAME")[1:]:
    print(hashlib.md5(frame[frame.index(b"\n") + 1:]).hexdigest())
