#!/usr/bin/env bash
# The README's test command: set up what is missing, build, and run every test on
# the current Vulkan device (lavapipe on a machine without a GPU) with validation on.
set -euo pipefail
cd "$(dirname "$0")/.."
Tools/setup.sh --models --assets --browser
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
export VELVET_VALIDATION=1
swift build --build-tests
swift test --skip-build
