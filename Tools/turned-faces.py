#!/usr/bin/env python3
"""Is a turned face read the right way up? A sweep of synthetic stills with known truth.

    Tools/turned-faces.py [VELVET [PHOTO]]   (default .build/release/velvet, test-assets/grace_hopper.jpg)

Each still is PHOTO, whole (for the default, uniform, cap and flag: the parts a turned face's
reading can go wrong on), scaled to 120 ... 500 px wide (its height in proportion), turned by 0, 90, 180 or
270 degrees (no orientation tag) and placed at three spots of a 1280x720 grey frame: 96
stills. `velvet analyze` runs on each with its defaults; a still passes when exactly one
face is found and its roll (the eye line, landmarks 33 -> 263) is within 30 degrees of the
turn. Prints each failing still and the count. Scratch files go to a temporary folder.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TURNS = {0: "", 90: ",transpose=clock", 180: ",hflip,vflip", 270: ",transpose=cclock"}
WIDTHS = [120, 160, 200, 230, 260, 300, 400, 500]
PLACES = ["300:100", "300:200", "700:150"]


def main():
    velvet = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "release", "velvet")
    photo = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "test-assets", "grace_hopper.jpg")
    size = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                           "-of", "csv=p=0", photo], capture_output=True, text=True, check=True).stdout.strip().split(",")
    aspect = int(size[1]) / int(size[0])
    environment = dict(os.environ)
    environment.setdefault("VELVET_MODELS_DIR", os.path.join(ROOT, "models"))
    environment.setdefault("XDG_RUNTIME_DIR", "/tmp")
    passed = failed = 0
    with tempfile.TemporaryDirectory() as scratch:
        for turn, rotation in TURNS.items():
            for width in WIDTHS:
                height = 2 * round(width * aspect / 2)
                for place in PLACES:
                    still = os.path.join(scratch, "still.png")
                    graph = f"[1]scale={width}:{height}{rotation}[s];[0][s]overlay={place}"
                    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "color=c=0x708090:s=1280x720",
                                    "-i", photo, "-filter_complex", graph, "-frames:v", "1", still], check=True)
                    result = subprocess.run([velvet, "analyze", still, "--json", "--quiet"], capture_output=True, text=True,
                                            env=environment)
                    if result.returncode != 0:
                        sys.exit(f"velvet analyze failed: {result.stderr.strip()}")
                    faces = json.loads(result.stdout)["frames"][0]["faces"]
                    readings = []
                    right = len(faces) == 1
                    for face in faces:
                        (ax, ay, _), (bx, by, _) = face["landmarks"][33], face["landmarks"][263]
                        roll = math.degrees(math.atan2(by - ay, bx - ax)) % 360
                        readings.append(f"{roll:.0f} deg, IOD {math.hypot(bx - ax, by - ay):.0f} px, presence {face['score']:.3f}")
                        right = right and min(abs(roll - turn), 360 - abs(roll - turn)) <= 30
                    if right:
                        passed += 1
                    else:
                        failed += 1
                        print(f"turned {turn:3d}, {width:3d} px wide, at {place}: {'; '.join(readings) or 'no face'}")
    print(f"read the right way up: {passed} of {passed + failed}")


if __name__ == "__main__":
    main()
