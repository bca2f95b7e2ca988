#!/usr/bin/env bash
# Builds a self-contained Velvet for another Linux machine (a GPU render node without the
# Swift toolchain or FFmpeg) as one tarball: the release binary with the Swift runtime
# linked in and an rpath of $ORIGIN/lib, the shared libraries it needs (FFmpeg 5.1 and their
# dependencies; not glibc, libstdc++ or the Vulkan loader, which the node provides), and
# MediaPipe's face models (the binary looks for models/ beside itself).
#
#   Tools/make-bundle.sh OUTDIR     -> OUTDIR/velvet-bundle.tar.xz (velvet/velvet, velvet/lib, velvet/models)
#
# On the node: tar -xJf velvet-bundle.tar.xz -C /opt && /opt/velvet/velvet devices
# The node needs glibc >= 2.36, libstdc++ and a Vulkan loader (libvulkan1) with its driver.
# The script then checks the bundle the way the node will see it: unpacked in an empty
# folder, run with a bare environment and /opt/swift hidden (a private mount namespace).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: Tools/make-bundle.sh OUTDIR}"
mkdir -p "$out"
Tools/setup.sh --models >/dev/null
# DT_RPATH, not DT_RUNPATH (--disable-new-dtags): RUNPATH covers only the binary's own
# dependencies, so libavformat would look for its libraries (libgme, ...) outside the bundle.
swift build -c release --product velvet --static-swift-stdlib -Xlinker -rpath -Xlinker '$ORIGIN/lib' \
    -Xlinker --disable-new-dtags
staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging/velvet/lib" "$staging/velvet/models"
strip -o "$staging/velvet/velvet" .build/release/velvet
ldd .build/release/velvet | awk '/=>/ {print $3}' | while read -r library; do
    case "$(basename "$library")" in
        libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|libvulkan.so.*|libstdc++.so.*|libgcc_s.so.*) ;;
        *) cp -L "$library" "$staging/velvet/lib/" ;;
    esac
done
cp models/*.tflite "$staging/velvet/models/"
tar -cJf "$out/velvet-bundle.tar.xz" -C "$staging" velvet

# The check: every library but the node's own (glibc, libstdc++, the Vulkan loader) must
# resolve inside the unpacked bundle, directly or through another library.
check="$(mktemp -d)"
tar -xJf "$out/velvet-bundle.tar.xz" -C "$check"
outside=$(env -i PATH=/usr/bin:/bin ldd "$check/velvet/velvet" | awk '/=>/ {print $1, $3}' | while read -r name path; do
    case "$name" in
        libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|libvulkan.so.*|libstdc++.so.*|libgcc_s.so.*) ;;
        *) case "$path" in "$check"/velvet/lib/*) ;; *) echo "$name => $path" ;; esac ;;
    esac
done)
if [ -n "$outside" ]; then
    echo "make-bundle: these resolve outside the bundle:" >&2
    echo "$outside" >&2
    exit 1
fi
if command -v unshare >/dev/null && [ -d /opt/swift ] && unshare --mount true 2>/dev/null; then
    unshare --mount sh -c "mount -t tmpfs none /opt/swift && cd '$check' && \
        env -i PATH=/usr/bin:/bin XDG_RUNTIME_DIR=/tmp ./velvet/velvet devices >/dev/null" \
        || { echo "make-bundle: the unpacked bundle does not run with /opt/swift hidden" >&2; exit 1; }
    echo "make-bundle: checked: runs from an empty folder with /opt/swift hidden and a bare environment"
fi
rm -rf "$check"
ls -l "$out"
