#!/usr/bin/env bash
# The README's main command: set up what is missing, build in release mode, and run the
# demo. Until the render path lands, the demo lists the Vulkan devices and runs the
# Gaussian-blur benchmark against OpenCV.
set -euo pipefail
cd "$(dirname "$0")/.."
Tools/setup.sh --python --models --assets
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
swift build -c release --product velvet
.build/release/velvet devices
.venv/bin/python Tools/bench-blur.py --velvet .build/release/velvet
