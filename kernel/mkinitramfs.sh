#!/bin/sh
# mkinitramfs.sh: builds the benchmark initramfs for the culprit kernel target: a static busybox,
# the static `spread` benchmark (guest/spread.c) and the agent (guest/init), as a gzip'd newc cpio.
#
# usage: mkinitramfs.sh [OUTPUT]
# Without OUTPUT the image goes to $CULPRIT_KERNEL_CACHE (default /var/cache/culprit-kernel) under a
# name keyed by the hash of its inputs, and is reused while they do not change. Prints the path.
set -eu
. "$(dirname "$0")/lib.sh"
COMMIT=initramfs
BUSYBOX=${CULPRIT_BUSYBOX:-/bin/busybox}
[ -x "$BUSYBOX" ] || die initramfs "no static busybox at $BUSYBOX (apt-get install busybox-static)"
file "$BUSYBOX" 2>/dev/null | grep -q "dynamically linked" && die initramfs "$BUSYBOX is dynamically linked; install busybox-static"

key=$(cat "$KERNEL_SCRIPTS/guest/spread.c" "$KERNEL_SCRIPTS/guest/init" "$BUSYBOX" | sha256sum | cut -c1-16)
if [ $# -ge 1 ]; then
    out=$1
else
    cache=${CULPRIT_KERNEL_CACHE:-/var/cache/culprit-kernel}
    mkdir -p "$cache"
    out=$cache/initramfs-$key.cpio.gz
    if [ -s "$out" ]; then
        echo "$out"
        exit 0
    fi
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/usr/bin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp"
cp "$BUSYBOX" "$root/bin/busybox"
gcc -O2 -Wall -static -o "$root/usr/bin/spread" "$KERNEL_SCRIPTS/guest/spread.c" \
    || die initramfs "compiling guest/spread.c statically (is libc6-dev installed?)"
cp "$KERNEL_SCRIPTS/guest/init" "$root/init"
chmod 755 "$root/init" "$root/bin/busybox" "$root/usr/bin/spread"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -9) >"$out.tmp" || die initramfs "cpio/gzip into $out"
mv "$out.tmp" "$out"
echo "$out"
