#!/bin/bash
# The retouch stages' GPU ms per frame, and a preset with an "others" section (two passes)
# against the same preset without, on a group still (docs/PERFORMANCE.md, Retouch stages;
# Per-face settings). Runs anywhere velvet runs (lavapipe, or a GPU node from the bundle).
#
#   Tools/bench-retouch.sh VELVET CLIP GROUP_STILL [RUNS]
#
# CLIP: a video with one face, mouth and eyes open (the doc's podium1080.mp4); GROUP_STILL: a
# photo of several faces (group1080.jpg). Prints one line per run.
set -u
velvet=$1 clip=$2 group=$3 runs=${4:-3}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
section() { tr -d '\n ' < "$1" | grep -o '"gpu_ms_per_frame":{[^}]*}' | grep -o "\"$2\":[0-9.]*" | cut -d: -f2; }
total() { tr -d '\n ' < "$1" | grep -o '"gpu_ms":{[^}]*}' | grep -o ':[0-9.]*' | tr -d : | awk '{s+=$1} END{printf "%.2f", s}'; }
for run in $(seq "$runs"); do
  "$velvet" render "$clip" -o "$work/r.mp4" -y --quiet --preset none --teeth 1 --eye-brighten 1 --under-eye 1 --shine 1 \
    --json > "$work/r.json" || exit 1
  echo "retouch run $run (ms a frame): teeth $(section "$work/r.json" teeth) eyes $(section "$work/r.json" eyes)" \
       "under-eye $(section "$work/r.json" under-eye) shine $(section "$work/r.json" shine)"
done
echo '{ "skin": { "strength": 0.7 } }' > "$work/plain.json"
echo '{ "skin": { "strength": 0.7 }, "others": { "skin": { "strength": 0.3 }, "lipstick": { "strength": 0 } } }' > "$work/others.json"
for run in $(seq "$runs"); do
  for preset in plain others; do
    start=$(date +%s.%N)
    "$velvet" render "$group" -o "$work/o.png" -y --quiet --preset "$work/$preset.json" --json > "$work/o.json" || exit 1
    end=$(date +%s.%N)
    awk -v p=$preset -v a="$start" -v b="$end" -v g="$(total "$work/o.json")" \
      'BEGIN{printf "group still, %s: wall %.3f s, GPU %s ms (every section of gpu_ms)\n", p, b - a, g}'
  done
done
