#!/usr/bin/env bash
# Builds a self-contained Velvet for another Linux machine (a GPU render node without the
# Swift toolchain or FFmpeg): the release binary with the Swift runtime linked in, and the
# shared libraries it needs (FFmpeg 5.1 and dependencies, not the Vulkan loader or glibc).
#
#   Tools/make-bundle.sh OUTDIR     -> OUTDIR/velvet.gz, OUTDIR/libs.tar.xz
#
# On the node: mkdir -p /opt/velvet && tar -xJf libs.tar.xz -C /opt/velvet &&
#              gunzip -c velvet.gz > /opt/velvet/velvet && chmod +x /opt/velvet/velvet &&
#              LD_LIBRARY_PATH=/opt/velvet/lib /opt/velvet/velvet devices
# The node needs glibc >= 2.36, libstdc++ and a Vulkan loader (libvulkan1) with its driver.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: Tools/make-bundle.sh OUTDIR}"
mkdir -p "$out"
swift build -c release --product velvet --static-swift-stdlib
strip -o "$out/velvet" .build/release/velvet
gzip -9 -f "$out/velvet"
staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging/lib"
ldd .build/release/velvet | awk '/=>/ {print $3}' | while read -r library; do
    case "$(basename "$library")" in
        libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|libvulkan.so.*|libstdc++.so.*|libgcc_s.so.*) ;;
        *) cp -L "$library" "$staging/lib/" ;;
    esac
done
tar -cJf "$out/libs.tar.xz" -C "$staging" lib
ls -l "$out"
