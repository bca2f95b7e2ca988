"""What the fixture and benchmark scripts share: the test photos (raw RGBA written by
Tools/fetch-test-assets.sh), the repository root, and the mediapipe version check."""
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PHOTOS = ["astronaut", "grace_hopper"]
DEFAULT_ASSETS = os.environ.get("VELVET_TEST_ASSETS", os.path.join(ROOT, "test-assets"))


def load_rgba(assets, name):
    """The photo `name` as an H x W x 4 uint8 array."""
    with open(os.path.join(assets, name + ".size")) as handle:
        width, height = (int(v) for v in handle.read().strip().split("x"))
    return np.fromfile(os.path.join(assets, name + ".rgba"), dtype=np.uint8).reshape(height, width, 4)


def require_mediapipe(tool):
    """mediapipe, imported late (so --help works without it); None after a message when it
    is not 0.10.21, the version the fixtures and anchors are defined against."""
    import mediapipe as mp
    if mp.__version__ != "0.10.21":
        print(f"{tool}: needs mediapipe 0.10.21, found {mp.__version__}", file=sys.stderr)
        return None
    return mp
