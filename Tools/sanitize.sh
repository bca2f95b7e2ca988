#!/usr/bin/env bash
# The whole test suite under a sanitizer, then a leak check of a real render.
#   Tools/sanitize.sh address|thread [--filter REGEX]
# Builds into .build/sanitize-<name> (the normal build is untouched). Tests run as in
# Tools/test.sh (lavapipe, validation layer on); the `velvet` binary the CLI tests start is
# built with the same sanitizer. Prints a summary line and exits non-zero on any report.
#
# Leaks: the Khronos validation layer (Debian 12's 1.3.239) leaks ~180 KB inside
# vkDestroyInstance, in every process that loads it, so LeakSanitizer is off for the suite
# and run instead on a render with the layer off (our code, FFmpeg, x264 and lavapipe).
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizer="${1:-}"
shift || true
case "$sanitizer" in
    address|thread) ;;
    *) echo "usage: Tools/sanitize.sh address|thread [--filter REGEX]" >&2; exit 2 ;;
esac
filter=()
if [[ "${1:-}" == "--filter" && -n "${2:-}" ]]; then filter=(--filter "$2"); fi

Tools/setup.sh --models --assets --browser >/dev/null
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
scratch=".build/sanitize-$sanitizer"
log="$scratch.log"
mkdir -p "$(dirname "$log")"
started=$(date +%s)
swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" -j 1 >"$log" 2>&1 \
    || { tail -30 "$log"; echo "sanitize: build failed" >&2; exit 1; }

export ASAN_OPTIONS="detect_leaks=0:abort_on_error=0"
export TSAN_OPTIONS="halt_on_error=0:second_deadlock_stack=1"
status=0
VELVET_VALIDATION=1 swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" "${filter[@]}" >>"$log" 2>&1 || status=$?
reports=$(grep -c -E "^(==[0-9]+==ERROR: AddressSanitizer|WARNING: ThreadSanitizer)" "$log" || true)
failures=$(grep -c -E "^Test Case .* failed \(" "$log" || true)
executed=$(grep -E "Executed [0-9]+ tests" "$log" | tail -1 | sed -E 's/.*Executed ([0-9]+) tests?, with ([0-9]+) failures?.*/\1 tests, \2 failures/')

leaks="skipped (thread)"
if [[ "$sanitizer" == address ]]; then
    output=$(mktemp -d)
    leakStatus=0
    ASAN_OPTIONS="detect_leaks=1" VELVET_VALIDATION=0 "$scratch/debug/velvet" render test-assets/astronaut.png \
        -o "$output/astronaut.png" --quiet >>"$log" 2>&1 || leakStatus=$?
    rm -rf "$output"
    if grep -q "ERROR: LeakSanitizer" "$log"; then leaks="reported"; status=1
    elif [[ $leakStatus -ne 0 ]]; then leaks="render failed ($leakStatus)"; status=1
    else leaks="none"; fi
fi
echo "sanitize $sanitizer: $executed; $failures failed test cases; $reports sanitizer reports; leaks: $leaks; $(( $(date +%s) - started )) s; log $log"
if [[ $reports -gt 0 || $status -ne 0 ]]; then exit 1; fi
