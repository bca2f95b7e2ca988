#!/usr/bin/env bash
# Several velvet binaries against each other on the same cells, run in turn (each cell: every
# binary, in the order given), each run's `bench media --beauty --json` kept: for before/after
# figures on a shared node, where the plain transcode itself moves between runs.
#
#   Tools/bench-binaries.sh OUTDIR REPEATS VELVET...
#
# Cells: 720p x264 ultrafast and veryfast (300 frames), 1080p medium (200), then 4K medium (60,
# once). Prints per run the ratio to the plain transcode of the same run and the GPU and
# look-ahead threads' busy ms per frame, bilateral and freqsep. Needs only a shell (the H200
# node has no Python): the JSON is read with grep.
set -uo pipefail
out="${1:?usage: Tools/bench-binaries.sh OUTDIR REPEATS VELVET...}"; repeats="$2"; shift 2
photo="${PHOTO:-$(dirname "$0")/../test-assets/grace_hopper.jpg}"
mkdir -p "$out"
field() { grep -o "\"$1\":[0-9.]*" | head -n "${2:-1}" | tail -n 1 | cut -d: -f2; }
run() { # binary index, size, preset, frames, repeat
    local velvet="${binaries[$1]}" file="$out/bin$1-$2-$3-$5.json"
    "$velvet" bench media --beauty --size "$2" --preset-x264 "$3" --frames "$4" --photo "$photo" --json --work-dir "$out" \
        > "$file" 2> "$file.err" || { echo "bin$1 $2 $3: failed (see $file.err)"; return; }
    local plain bil fre
    plain=$(field plain_fps < "$file")
    # The beauty object lists bilateral, then freqsep; each with busy (decode, encode, gpu, look_ahead) then fps.
    bil=$(sed 's/"freqsep".*//' "$file"); fre=$(sed 's/.*"freqsep"//' "$file")
    awk -v n="bin$1" -v c="$2 $3 #$5" -v p="$plain" -v bf="$(field fps <<<"$bil")" -v bg="$(field gpu <<<"$bil")" \
        -v bl="$(field look_ahead <<<"$bil")" -v ff="$(field fps <<<"$fre")" -v fg="$(field gpu <<<"$fre")" \
        -v fl="$(field look_ahead <<<"$fre")" 'BEGIN {
        printf "%-6s %-24s plain %6.1f fps | bilateral %.2fx gpu %5.2f look-ahead %5.2f ms | freqsep %.2fx gpu %5.2f look-ahead %5.2f ms\n",
               n, c, p, bf / p, bg, bl, ff / p, fg, fl }'
}
binaries=("$@")
for i in "${!binaries[@]}"; do echo "bin$i = ${binaries[$i]}"; done
for ((r = 1; r <= repeats; r++)); do
    for cell in "1280x720 ultrafast 300" "1280x720 veryfast 300" "1920x1080 medium 200"; do
        for i in "${!binaries[@]}"; do run "$i" $cell "$r"; done
    done
done
for i in "${!binaries[@]}"; do run "$i" 3840x2160 medium 60 1; done
