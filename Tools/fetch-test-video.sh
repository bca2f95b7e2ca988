#!/usr/bin/env bash
# Fetches the real face video the tracker tests use: the demo movie of Debian's kphotoalbum
# package (/usr/share/kphotoalbum/demo/movie.avi, 160x120, 68 frames), through apt.
# Never committed. Safe to re-run: it skips what is already there.
#
#   Tools/fetch-test-video.sh        into <repo>/test-assets (git-ignored)
#   VELVET_TEST_ASSETS=DIR Tools/fetch-test-video.sh
#
# Writes test-assets/kphotoalbum-movie.avi. Needs apt-get and dpkg-deb (any Debian/Ubuntu).
set -euo pipefail
cd "$(dirname "$0")/.."

assets="${VELVET_TEST_ASSETS:-$PWD/test-assets}"
target="$assets/kphotoalbum-movie.avi"
mkdir -p "$assets"
[ -s "$target" ] && exit 0

for tool in apt-get dpkg-deb; do
    command -v "$tool" >/dev/null 2>&1 || { echo "fetch-test-video: $tool is missing (a Debian system is needed)" >&2; exit 1; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "fetch-test-video: downloading the kphotoalbum package"
if ! (cd "$work" && apt-get download -q kphotoalbum >/dev/null 2>&1); then
    # Stale or missing package lists: refresh them once and try again.
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    if ! (cd "$work" && apt-get download -q kphotoalbum >/dev/null); then
        echo "fetch-test-video: 'apt-get download kphotoalbum' failed" >&2
        exit 1
    fi
fi
dpkg-deb -x "$work"/kphotoalbum_*.deb "$work/root"
member="$work/root/usr/share/kphotoalbum/demo/movie.avi"
[ -s "$member" ] || { echo "fetch-test-video: the package has no demo/movie.avi" >&2; exit 1; }
cp "$member" "$target.partial"
mv "$target.partial" "$target"
echo "fetch-test-video: -> $target"
