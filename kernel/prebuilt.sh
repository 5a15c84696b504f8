#!/bin/sh
# prebuilt.sh: prints the path of a prebuilt vmlinux of Debian's unmodified linux-source-6.1 with
# the culprit guest config, for the short kernel test of the normal test suite.
#
# The cache is $CULPRIT_KERNEL_CACHE (default /var/cache/culprit-kernel)/<package version>-<hash of
# guest.config>/{vmlinux,config,info}. When it is absent, the kernel is built (a cold build: about
# 12 minutes on 2 idle cores) only if CULPRIT_KERNEL_BUILD=1; otherwise the script explains and
# exits with status 3, which the test takes as "nothing to boot here".
set -eu
. "$(dirname "$0")/lib.sh"
COMMIT=linux-source-6.1
TARBALL=${CULPRIT_KERNEL_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
[ -r "$TARBALL" ] || { echo "prebuilt.sh: $TARBALL not found (apt-get install linux-source-6.1)" >&2; exit 3; }
version=$(dpkg-query -W -f '${Version}' linux-source-6.1 2>/dev/null || echo unknown)
key=$version-$(sha256sum "$KERNEL_SCRIPTS/guest.config" | cut -c1-16)
dir=${CULPRIT_KERNEL_CACHE:-/var/cache/culprit-kernel}/$key
if [ -s "$dir/vmlinux" ] && [ -s "$dir/info" ]; then
    echo "$dir/vmlinux"
    exit 0
fi
if [ "${CULPRIT_KERNEL_BUILD:-}" != 1 ]; then
    echo "prebuilt.sh: no prebuilt kernel at $dir; build it once with CULPRIT_KERNEL_BUILD=1 $0" >&2
    exit 3
fi
mkdir -p "$dir"
if [ ! -d "$dir/src" ]; then
    note "extracting $TARBALL into $dir/src"
    mkdir -p "$dir/src.tmp"
    tar xf "$TARBALL" -C "$dir/src.tmp" --strip-components=1 || die extract "tar xf $TARBALL (disk full?)"
    mv "$dir/src.tmp" "$dir/src"
fi
"$KERNEL_SCRIPTS/build.sh" --tree "$dir/src" --out "$dir" >&2
# Only the image, its config and its info are kept; the tree and objects are 1.5 GB.
rm -rf "$dir/src" "$dir/obj" "$dir/cfg"
echo "$dir/vmlinux"
