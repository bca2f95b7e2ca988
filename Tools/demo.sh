#!/usr/bin/env bash
# The README's main command: set up what is missing (packages, models, test photos),
# build in release mode, list the Vulkan devices and run the demo into demo-output/.
set -euo pipefail
cd "$(dirname "$0")/.."
Tools/setup.sh --models --assets
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
swift build -c release --product velvet
.build/release/velvet devices
.build/release/velvet demo --output-dir demo-output -y   # safe to re-run: replaces the earlier demo
