#!/usr/bin/env bash
# Builds and runs the libFuzzer targets (Swift -sanitize=fuzzer,address) for a bounded time
# each, from seed corpora this script makes, and prints executions and findings.
#
#   Tools/fuzz.sh [--seconds N]      default 60 s per target; CI runs a short pass
#
# Targets: tflite (TFLiteModel + TFLiteGraph on any bytes; seeds: the five models), cube
# (the .cube LUT parser on any text), preset (preset JSON decoding and validation on any
# bytes) and media (MediaReader open + decode of any file, EXIF tags read from the file; seeds:
# small mp4/mkv/png/jpg/tif).
# Crashes are written to .build/fuzz/<target>/crash-* and make the script exit 1.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60
[ "${1:-}" = "--seconds" ] && seconds="$2"
out=.build/fuzz
mkdir -p "$out"

build() { # name, sources...
    local name="$1"; shift
    rm -f "$out/$name-fuzz" # a stale binary must not pass for a build that failed
    swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name "Fuzz$name" -I Sources/CFFmpeg "$@" -o "$out/$name-fuzz" 2>&1 \
        | grep -v "^warning\|^$\|ld.gold: warning" || true
    [ -x "$out/$name-fuzz" ] || { echo "fuzz: building $name failed" >&2; exit 1; }
}

# Every file of the module that needs no GPU or FFmpeg module (no list to keep: a new settings
# or parser file is fuzzed as soon as it exists, and one that starts to need the GPU drops out).
gpu_free() { grep -L "^import Velvet\|^import CVulkan\|^import CFFmpeg" "Sources/$1"/*.swift; }

build tflite Sources/VelvetNN/TFLite/*.swift Tools/Fuzz/TFLiteFuzzTarget.swift
build cube $(gpu_free VelvetBeauty) Tools/Fuzz/CubeLUTFuzzTarget.swift
build preset $(gpu_free VelvetBeauty) Tools/Fuzz/PresetFuzzTarget.swift
build media Sources/VelvetMedia/MediaError.swift Sources/VelvetMedia/MediaFrame.swift Sources/VelvetMedia/MediaReader.swift \
    Sources/VelvetMedia/DeclaredLength.swift Sources/VelvetMedia/TimestampSynthesizer.swift \
    Sources/VelvetMedia/Orientation.swift Sources/VelvetMedia/OutputContainer.swift Sources/VelvetMedia/LogCapture.swift \
    Sources/VelvetMedia/ExifTagReader.swift Sources/VelvetMedia/ImageSequence.swift Sources/VelvetMedia/JPEGEnd.swift Sources/VelvetMedia/ClockJumps.swift \
    Sources/VelvetMedia/FrameLook.swift Sources/VelvetMedia/ColorMatrix.swift \
    Tools/Fuzz/MediaFuzzTarget.swift

mkdir -p "$out/tflite/corpus" "$out/media/corpus" "$out/cube/corpus" "$out/preset/corpus"
printf 'TITLE "seed"\nLUT_3D_SIZE 2\nDOMAIN_MIN 0 0 0\nDOMAIN_MAX 1 1 1\n0 0 0\n1 0 0\n0 1 0\n1 1 0\n0 0 1\n1 0 1\n0 1 1\n1 1 1\n' > "$out/cube/corpus/identity.cube"
printf '{"skin": {"smoothing": "bilateral", "strength": 0.5, "zones": {"forehead": 1}}, "reshape": {"eyes": 0.2, "slim": 0.1},\n "lipstick": {"colour": "#B84A54", "strength": 0.4, "blend": "natural"}, "blush": {"strength": 0.3},\n "lut": {"builtIn": "warm", "strength": 0.5, "scope": "skin"}}\n' > "$out/preset/corpus/full.json"
printf '{"skin": {"strength": 0.7}, "others": {"skin": {"strength": 0.2, "zones": {"nose": 0.3}}, "lipstick": {"strength": 0}}}\n' > "$out/preset/corpus/others.json"
cp models/*.tflite "$out/tflite/corpus/" 2>/dev/null || { echo "fuzz: run Tools/fetch-models.sh first" >&2; exit 1; }
seed() { ffmpeg -hide_banner -loglevel error -y "$@"; }
seed -f lavfi -i testsrc2=size=64x48:rate=10 -t 0.5 -c:v libx264 "$out/media/corpus/a.mp4"
seed -f lavfi -i testsrc2=size=64x48:rate=10 -f lavfi -i sine -t 0.5 -c:v libvpx-vp9 -c:a libopus "$out/media/corpus/b.mkv"
seed -f lavfi -i testsrc2=size=32x24 -frames:v 1 "$out/media/corpus/c.png"
seed -f lavfi -i testsrc2=size=32x24 -frames:v 1 "$out/media/corpus/d.jpg"
seed -f lavfi -i testsrc2=size=32x24 -frames:v 1 "$out/media/corpus/e.tif"
# A PNG with an eXIf chunk (orientation 6, big-endian TIFF) after IHDR, for the chunk walker.
python3 - "$out/media/corpus/c.png" "$out/media/corpus/f.png" <<'PY'
import struct, sys, zlib
png = open(sys.argv[1], "rb").read()
exif = b"MM\x00\x2a\x00\x00\x00\x08\x00\x01" + struct.pack(">HHIHH", 0x0112, 3, 1, 6, 0) + b"\x00" * 4
chunk = struct.pack(">I", len(exif)) + b"eXIf" + exif + struct.pack(">I", zlib.crc32(b"eXIf" + exif))
open(sys.argv[2], "wb").write(png[:33] + chunk + png[33:])
PY

status=0
for target in tflite cube preset media; do
    log="$out/$target/log.txt"
    (cd "$out/$target" && ASAN_OPTIONS=detect_leaks=0 "../$target-fuzz" -max_total_time="$seconds" -rss_limit_mb=4096 \
        -timeout=20 -max_len=1048576 -print_final_stats=1 corpus > log.txt 2>&1) || status=1
    runs=$(grep -o "stat::number_of_executed_units: *[0-9]*" "$log" | grep -o "[0-9]*$" || echo "?")
    crashes=$(ls "$out/$target" | grep -c "^crash-\|^oom-\|^timeout-" || true)
    echo "fuzz: $target: $runs executions in ${seconds}s, $crashes finding(s)"
done
exit $status
