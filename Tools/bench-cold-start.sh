#!/bin/bash
# Cold start (docs/PERFORMANCE.md, "Cold start"): one still render per line, each a fresh
# process, with the driver's and Velvet's pipeline caches empty, off or warm, and the kernels
# compiled on PipelineCompiler's threads (the default) or one after another in their inits
# (VELVET_COMPILE_THREADS=0, as before it). The driver's cache: NVIDIA's lives in
# $XDG_CACHE_HOME/nvidia (__GL_SHADER_DISK_CACHE=0 turns it off), Mesa's (lavapipe) in
# $XDG_CACHE_HOME/mesa_shader_cache (MESA_SHADER_CACHE_DISABLE=true); both are set alike.
#
#   Tools/bench-cold-start.sh VELVET PHOTO [ROUNDS]
set -u
V="${1:?usage: Tools/bench-cold-start.sh VELVET PHOTO [ROUNDS]}"; PHOTO="${2:?usage: Tools/bench-cold-start.sh VELVET PHOTO [ROUNDS]}"
ROUNDS="${3:-2}"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
OFF="__GL_SHADER_DISK_CACHE=0 MESA_SHADER_CACHE_DISABLE=true"
BASE=$(mktemp -d /tmp/velvet-cold-start-XXXXXX)
$V --version
t() { local label=$1; shift; local s=$(date +%s.%N); env "$@" $V render "$PHOTO" -o $BASE/c.png -y --quiet; local rc=$?; local e=$(date +%s.%N); awk -v a=$s -v b=$e -v l="$label" -v rc=$rc 'BEGIN { printf "%-64s %6.2f s rc=%s\n", l, b - a, rc }'; }
for round in $(seq "$ROUNDS"); do
  c=$BASE/cache-$round; mkdir -p $c $c-serial
  t "fully cold (both caches empty)" XDG_CACHE_HOME=$c
  t "fully cold, one after another (VELVET_COMPILE_THREADS=0)" XDG_CACHE_HOME=$c-serial VELVET_COMPILE_THREADS=0
  t "driver cache off, Velvet cache warm" XDG_CACHE_HOME=$c $OFF
  t "driver cache off, Velvet cache warm, one after another" XDG_CACHE_HOME=$c $OFF VELVET_COMPILE_THREADS=0
  t "both warm" XDG_CACHE_HOME=$c
  t "both warm, one after another" XDG_CACHE_HOME=$c VELVET_COMPILE_THREADS=0
  rm -rf $c/nvidia $c/mesa_shader_cache*
  t "driver cache emptied, Velvet cache warm" XDG_CACHE_HOME=$c
  t "driver cache off, Velvet cache off" XDG_CACHE_HOME=$c $OFF VELVET_PIPELINE_CACHE=off
  t "driver cache warm, Velvet cache off" XDG_CACHE_HOME=$c VELVET_PIPELINE_CACHE=off
  du -sh $c/velvet $c/nvidia $c/mesa_shader_cache* 2>/dev/null
done
ls $BASE/cache-1/velvet/pipelines/; ls $BASE/cache-1/velvet/pipelines/*/ | wc -l
rm -rf "$BASE"
