#!/bin/bash
# Cold start (docs/PERFORMANCE.md, "Cold start"): one still render per line, each a fresh
# process, with the driver's and Velvet's pipeline caches empty, off or warm. NVIDIA's
# driver cache lives in $XDG_CACHE_HOME/nvidia and __GL_SHADER_DISK_CACHE=0 turns it off.
#
#   Tools/bench-cold-start.sh VELVET PHOTO
set -u
V="${1:?usage: Tools/bench-cold-start.sh VELVET PHOTO}"; PHOTO="${2:?usage: Tools/bench-cold-start.sh VELVET PHOTO}"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
$V --version
t() { local label=$1; shift; local s=$(date +%s.%N); env "$@" $V render "$PHOTO" -o /tmp/c.png -y --quiet; local rc=$?; local e=$(date +%s.%N); awk -v a=$s -v b=$e -v l="$label" -v rc=$rc 'BEGIN { printf "%-52s %6.2f s rc=%s\n", l, b - a, rc }'; }
for round in 1 2; do
  c=/tmp/cache-$round; rm -rf $c; mkdir -p $c
  t "fully cold (both caches empty)" XDG_CACHE_HOME=$c
  t "driver cache off, Velvet cache warm" XDG_CACHE_HOME=$c __GL_SHADER_DISK_CACHE=0
  t "both warm" XDG_CACHE_HOME=$c
  rm -rf $c/nvidia
  t "driver cache emptied, Velvet cache warm" XDG_CACHE_HOME=$c
  t "driver cache off, Velvet cache off" XDG_CACHE_HOME=$c __GL_SHADER_DISK_CACHE=0 VELVET_PIPELINE_CACHE=off
  t "driver cache warm, Velvet cache off" XDG_CACHE_HOME=$c VELVET_PIPELINE_CACHE=off
  du -sh $c/velvet $c/nvidia 2>/dev/null
done
ls /tmp/cache-1/velvet/pipelines/; ls /tmp/cache-1/velvet/pipelines/*/ | wc -l
rm -rf /tmp/cache-1 /tmp/cache-2
