#!/usr/bin/env bash
# The issue's GPU cells on a rented GPU node (docs/PERFORMANCE.md), from the bundle
# (Tools/make-bundle.sh) and the Vulkan loader's Debian packages, run from the repository root
# on the node. The node has no FFmpeg, Python or packages: the bundle carries FFmpeg, and the
# figures are read back from the JSON each run writes.
#
#   Tools/device-bench.sh setup                 unpack .gl/*.deb (libvulkan1 and the glvnd
#                                               libraries) into / and BUNDLE into /opt
#   Tools/device-bench.sh table OUT VELVET      each cell (720p ultrafast and veryfast, 1080p
#                                               and 4K medium) with --repeats 3, then 720p
#                                               ultrafast on cores 0-7 (taskset)
#   Tools/device-bench.sh rounds OUT VELVET R CELL...   R rounds of the cells ("1280x720 ultrafast 300")
#   Tools/device-bench.sh alternate OUT R VELVET...     720p ultrafast, one run of each binary
#                                               per round, the order flipped every round (A/B)
#   Tools/device-bench.sh COMMAND...            COMMAND with the Vulkan environment set
#
# BUNDLE: $BUNDLE, default .dev/velvet-bundle.tar.xz. Photo: $PHOTO, default test-assets/grace_hopper.jpg.
set -uo pipefail
bundle="${BUNDLE:-.dev/velvet-bundle.tar.xz}"
photo="${PHOTO:-test-assets/grace_hopper.jpg}"

vulkan_environment() {
    local icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
    if [ -f "$icd" ]; then
        export VK_DRIVER_FILES=$icd __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
    fi
    # A fresh cache per node: the first render compiles, as on any new node.
    export XDG_RUNTIME_DIR=/tmp XDG_CACHE_HOME=/tmp/velvet-cache
    mkdir -p /tmp/velvet-cache
}

bench() { # OUTFILE VELVET SIZE PRESET FRAMES [more bench options]
    local file=$1 velvet=$2 size=$3 preset=$4 frames=$5 work
    shift 5
    work="$(dirname "$file")/work"
    mkdir -p "$work"
    "$velvet" bench media --beauty --size "$size" --preset-x264 "$preset" --frames "$frames" --photo "$photo" \
        --json --work-dir "$work" "$@" > "$file" 2> "$file.err" || echo "$(basename "$file"): failed ($(tail -n 2 "$file.err"))"
}

command=${1:?usage: Tools/device-bench.sh setup|table|rounds|alternate|COMMAND ...}
shift
case $command in
setup)
    for deb in .gl/*.deb; do dpkg -x "$deb" /; done
    ldconfig
    [ -d /opt/velvet ] || tar -xJf "$bundle" -C /opt
    vulkan_environment
    /opt/velvet/velvet --version ;;
table)
    out=$1 velvet=$2
    vulkan_environment
    for cell in "1280x720 ultrafast 300" "1280x720 veryfast 300" "1920x1080 medium 200" "3840x2160 medium 60"; do
        set -- $cell
        bench "$out/$1-$2.json" "$velvet" "$1" "$2" "$3" --repeats 3
    done
    taskset -c 0-7 bash -c "$(declare -f bench); photo='$photo'; bench '$out/8cores-1280x720-ultrafast.json' '$velvet' 1280x720 ultrafast 300 --repeats 3"
    rm -rf "$out/work" ;;
rounds)
    out=$1 velvet=$2 rounds=$3
    shift 3
    cells=("$@")
    vulkan_environment
    for ((round = 1; round <= rounds; round++)); do
        for cell in "${cells[@]}"; do
            set -- $cell
            bench "$out/$1-$2-r$round.json" "$velvet" "$1" "$2" "$3" --repeats 3
        done
    done
    rm -rf "$out/work" ;;
alternate)
    out=$1 rounds=$2
    shift 2
    binaries=("$@")
    vulkan_environment
    for ((round = 1; round <= rounds; round++)); do
        order=("${!binaries[@]}")
        if ((round % 2 == 0)); then mapfile -t order < <(printf '%s\n' "${!binaries[@]}" | tac); fi
        for index in "${order[@]}"; do
            bench "$out/$(basename "${binaries[$index]}")-r$round.json" "${binaries[$index]}" 1280x720 ultrafast 300
        done
    done
    rm -rf "$out/work" ;;
*)
    vulkan_environment
    "$command" "$@" ;;
esac
