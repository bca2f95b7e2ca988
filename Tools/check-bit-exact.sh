#!/usr/bin/env bash
# Renders the same cases with two velvet binaries and says, per output, whether the decoded
# pixels are identical: the check that a refactor changed no result.
#
#   Tools/check-bit-exact.sh OLD_VELVET NEW_VELVET
#
# Cases: two photos (a portrait, a five-face group) x every built-in preset, each debug
# view, a half matte (--matte-in), a LUT through the skin with bilateral, sharpen alone;
# a short lossless clip (default and studio); compare --preset studio. Exit 1 if any differ.
# The landmarks debug view draws overlapping mesh dots in parallel, so under load it can
# differ from run to run whatever the binary: it is run twice per binary and reported apart.
set -uo pipefail
cd "$(dirname "$0")/.."
old="$1"; new="$2"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export VELVET_MODELS_DIR="${VELVET_MODELS_DIR:-$PWD/models}" XDG_CONFIG_HOME="$work/config"
ff() { ffmpeg -hide_banner -loglevel error -y "$@"; }
ff -i test-assets/grace_hopper.jpg -vf scale=384:-2 "$work/grace.png"
ff -i test-assets/photos/mexico.webp -vf scale=640:-2 "$work/group.png"
ff -i "$work/grace.png" -vf "format=gray,geq=lum='if(lt(X,W/2),255,128)'" "$work/matte.png"
ff -loop 1 -i "$work/grace.png" -vf "crop=iw:ih-mod(ih\,2)" -t 0.4 -r 10 -c:v ffv1 "$work/clip.mkv"

render_all() { # velvet, directory
    local v="$1" out="$2" i=0; mkdir -p "$out"
    for input in grace group; do
        for options in "" "--preset natural" "--preset studio" "--preset glam" "--preset soft" "--preset none" \
                       "--debug-view mask" "--debug-view zones" "--debug-view spots" \
                       "--lut warm --lut-on skin --smoothing bilateral" "--preset none --sharpen 0.5" "--matte-in $work/matte.png"; do
            i=$((i + 1))
            [ "$input" = group ] && [[ "$options" == --matte-in* ]] && continue
            # shellcheck disable=SC2086
            "$v" render "$work/$input.png" -o "$out/$input-$i.png" -y --quiet $options || echo "failed: $input $options"
        done
    done
    "$v" render "$work/clip.mkv" -o "$out/clip-default.mkv" -y --quiet --codec ffv1
    "$v" render "$work/clip.mkv" -o "$out/clip-studio.mkv" -y --quiet --codec ffv1 --preset studio
    "$v" compare "$work/grace.png" --a bilateral --b freqsep --preset studio -o "$out/compare.png" -y --quiet
    for run in 1 2; do "$v" render "$work/grace.png" -o "$out/landmarks-$run.png" -y --quiet --debug-view landmarks; done
}
render_all "$old" "$work/old"
render_all "$new" "$work/new"
pixels() { ffmpeg -hide_banner -loglevel error -i "$1" -f framemd5 - | grep -v '^#' | awk '{print $NF}' | md5sum; }
status=0 same=0
for file in "$work"/old/*; do
    name=$(basename "$file")
    [[ "$name" == landmarks-* || ! "$name" =~ \.(png|mkv)$ ]] && continue
    if [ "$(pixels "$file")" = "$(pixels "$work/new/$name")" ]; then same=$((same + 1)); else echo "differs: $name"; status=1; fi
done
echo "bit-exact: $same of $(ls "$work"/old | grep -v '^landmarks-' | grep -cE '\.(png|mkv)$') outputs"
echo "landmarks view: old $(pixels "$work/old/landmarks-1.png" | cut -c1-8) $(pixels "$work/old/landmarks-2.png" | cut -c1-8)," \
     "new $(pixels "$work/new/landmarks-1.png" | cut -c1-8) $(pixels "$work/new/landmarks-2.png" | cut -c1-8)"
exit $status
