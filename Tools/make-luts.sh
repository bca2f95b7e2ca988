#!/usr/bin/env bash
# Writes Velvet's own colour grades (gentle-brighten, warm, cool, soft-matte; defined by
# formula in Sources/VelvetBeauty/BuiltInLUT.swift) as 33^3 .cube files, for use in
# editors or as `velvet render --lut FILE`.   Tools/make-luts.sh [DIR]   (default luts/)
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product velvet >/dev/null
.build/release/velvet luts export "${1:-luts}" -y   # replaces an earlier export
