#!/usr/bin/env bash
# Checks the README's promise on a fresh Debian 12: a minimal bookworm made by debootstrap,
# with nothing in it but the Swift toolchain (this machine's /opt/swift, bound in) and the
# packages swift.org lists for it, runs the README's commands from a clone of this checkout.
# Run as root on a Debian or Ubuntu host with network access to the Debian mirror and PyPI:
#
#   Tools/fresh-debian-check.sh ROOT [demo|test|both]   (default: demo)
#
# ROOT is made if missing (about 400 MB, then the packages the commands install) and kept, so
# a second run checks that the commands are safe to re-run. The host's extra CA certificates
# (/usr/local/share/ca-certificates, e.g. a proxy's) are copied in: they are the network's,
# not the project's. Output: each command's log and exit status.
set -euo pipefail
root="${1:?usage: Tools/fresh-debian-check.sh ROOT [demo|test|both]}"
what="${2:-demo}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
toolchain="$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")"
[ "$(id -u)" -eq 0 ] || { echo "fresh-debian-check: run as root (debootstrap, chroot, mounts)" >&2; exit 2; }

if [ ! -x "$root/bin/bash" ]; then
    command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
    debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian
    rm -f "$root/etc/apt/sources.list"
    cat > "$root/etc/apt/sources.list.d/debian.sources" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
fi
cp /etc/resolv.conf "$root/etc/"
mkdir -p "$root/usr/local/share/ca-certificates" "$root/opt/swift"
cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/" 2>/dev/null || true

mounted=()
cleanup() { for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done; }
trap cleanup EXIT
mountpoint -q "$root/opt/swift" || { mount --bind "$toolchain" "$root/opt/swift"; mounted+=("$root/opt/swift"); }
mountpoint -q "$root/proc" || { mount -t proc proc "$root/proc"; mounted+=("$root/proc"); }
mountpoint -q "$root/sys" || { mount --rbind /sys "$root/sys"; mounted+=("$root/sys"); }
mountpoint -q "$root/dev" || { mount --rbind /dev "$root/dev"; mounted+=("$root/dev"); }

rm -rf "$root/root/velvet"
git clone -q "$repo" "$root/root/velvet"

# The toolchain's own prerequisites (swift.org's Debian 12 list): the README's "Swift 6.3 on PATH".
run() {
    chroot "$root" /usr/bin/env -i PATH=/opt/swift/usr/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
        /bin/bash -c "$1"
}
run "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    binutils-gold gcc libc6-dev libcurl4-openssl-dev libedit2 libgcc-12-dev libpython3-dev libsqlite3-0 \
    libstdc++-12-dev libxml2-dev libncurses-dev libz3-dev pkg-config tzdata zlib1g-dev uuid-dev git ca-certificates \
    >/dev/null && update-ca-certificates >/dev/null"

status=0
for command in demo test; do
    case "$what" in "$command"|both) ;; *) continue ;; esac
    echo "fresh-debian-check: Tools/$command.sh in $root/root/velvet (log: $root/root/$command.log)"
    if run "cd /root/velvet && Tools/$command.sh" > "$root/root/$command.log" 2>&1; then
        echo "fresh-debian-check: Tools/$command.sh passed"
    else
        echo "fresh-debian-check: Tools/$command.sh FAILED; the end of its log:"; tail -20 "$root/root/$command.log"; status=1
    fi
done
exit $status
