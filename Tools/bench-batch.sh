#!/usr/bin/env bash
# Files per hour of `velvet batch` with one worker and with several, over the same clips
# (issue 21). Two steps, because a render node has no FFmpeg of its own:
#
#   Tools/bench-batch.sh clips DIR                  16 clips, 1920x1080, 96 frames (here)
#   Tools/bench-batch.sh run VELVET DIR [DEVICES]   the table (on the node, from the bundle)
#
# DEVICES is the second worker set (default 0,1; 0,0 puts two workers on one GPU). Every
# output is decoded back by velvet itself (frame count) and no partial may be left.
set -euo pipefail
case "${1:-}" in
clips)
    dir="${2:?usage: Tools/bench-batch.sh clips DIR}"; mkdir -p "$dir"
    photos=(test-assets/photos/*.jpg)
    for i in $(seq -w 1 16); do
        photo="${photos[$(( (10#$i - 1) % ${#photos[@]} ))]}"
        # The whole photo (padded, not cropped: a crop cuts the face off a portrait), a slow
        # zoom and grain, so neither the tracker nor the encoder sees a still.
        ffmpeg -nostdin -loglevel error -y -loop 1 -i "$photo" -vf \
            "scale=1920:1080:force_original_aspect_ratio=decrease,pad=1920:1080:(ow-iw)/2:(oh-ih)/2,setsar=1,zoompan=z='1+0.0015*on':d=96:s=1920x1080:fps=24,noise=alls=3:allf=t,format=yuv420p" \
            -frames:v 96 -c:v libx264 -preset veryfast -crf 20 "$dir/clip$i.mp4"
    done ;;
run)
    velvet="${2:?usage: Tools/bench-batch.sh run VELVET DIR [DEVICES]}"; dir="${3:?}"; second="${4:-0,1}"
    work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
    "$velvet" batch "$dir/clip01.mp4" --output-dir "$work/warm" --devices 0 --preset-x264 ultrafast >/dev/null 2>&1
    count=$(ls "$dir"/*.mp4 | wc -l)
    printf "%-10s %-8s %8s %10s %6s\n" x264 devices seconds files/h ratio
    for preset in ultrafast veryfast medium; do
        one=""
        for devices in 0 "$second"; do
            out="$work/$preset-${devices//,/_}"
            start=$(date +%s.%N)
            "$velvet" batch "$dir"/*.mp4 --output-dir "$out" --devices "$devices" --preset-x264 "$preset" >/dev/null 2>"$work/batch.log" \
                || { cat "$work/batch.log" >&2; exit 1; }
            end=$(date +%s.%N)
            seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')
            [ -z "$one" ] && one="$seconds"
            awk -v p="$preset" -v d="$devices" -v s="$seconds" -v o="$one" -v n="$count" \
                'BEGIN { printf "%-10s %-8s %8.2f %10.0f %5.2fx\n", p, d, s, n * 3600 / s, o / s }'
            outputs=$(ls "$out"/*.mp4 | wc -l); partials=$(ls -a "$out" | grep -c velvet-partial || true)
            [ "$outputs" = "$count" ] && [ "$partials" = 0 ] || { echo "outputs $outputs of $count, partials $partials" >&2; exit 1; }
            for f in "$out"/*.mp4; do
                frames=$("$velvet" analyze "$f" --json --detector short --max-faces 1 | grep -o '"frame":' | wc -l)
                [ "$frames" = 96 ] || { echo "$f: $frames frames, not 96" >&2; exit 1; }
            done
        done
    done ;;
*) sed -n 2,9p "$0" >&2; exit 2 ;;
esac
