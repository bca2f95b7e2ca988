#!/usr/bin/env bash
# A signal that reaches velvet after its output is in place but before the process has ended
# must still end it with 128+N and its line (docs/RELIABILITY.md). Renders a small still TRIES
# times, stops it 0–12 ms after the output appears, sends SIGTERM and continues it, and counts
# the runs that were stopped alive (not yet exiting) and still exited 0.
#
#   Tools/late-signal.sh VELVET PHOTO [TRIES]      (models: $VELVET_MODELS_DIR)
set -uo pipefail
velvet=${1:?usage: Tools/late-signal.sh VELVET PHOTO [TRIES]} photo=${2:?photo} tries=${3:-100}
velvet=$(realpath "$(command -v "$velvet" || echo "$velvet")") photo=$(realpath "$photo")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$photo" "$work/in.${photo##*.}"
cd "$work" || exit 1
alive=0 lost=0 late=0
for ((try = 1; try <= tries; try++)); do
    rm -f out.png
    "$velvet" render "in.${photo##*.}" -o out.png -y 2> err.txt &
    pid=$!
    while [ ! -e out.png ] && kill -0 "$pid" 2> /dev/null; do sleep 0.0005; done
    sleep "0.0$(printf '%02d' $((RANDOM % 13)))"
    # Stopped first, so what /proc says holds when the signal is sent: a process stopped
    # before it called exit_group (state T; PF_EXITING, bit 2 of the flags, unset) is alive
    # and must end with 143 once continued.
    kill -STOP "$pid" 2> /dev/null
    state=$(awk '{print (int($9 / 4) % 2 ? "X" : $3)}' "/proc/$pid/stat" 2> /dev/null)
    kill -TERM "$pid" 2> /dev/null
    kill -CONT "$pid" 2> /dev/null
    wait "$pid"
    status=$?
    if [ "$status" != 0 ] && [ "$status" != 143 ]; then
        echo "try $try: exit $status: $(tail -n 1 err.txt)" >&2
        exit 1
    elif [ "$state" = T ]; then
        alive=$((alive + 1))
        [ "$status" = 0 ] && lost=$((lost + 1))
    else
        late=$((late + 1))
    fi
done
echo "tries $tries: the signal reached a live process $alive times, $lost of them lost (exit 0, no line); after the end $late"
[ "$lost" = 0 ]
