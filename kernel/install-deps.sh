#!/bin/sh
# install-deps.sh: installs the Debian packages the culprit kernel target needs
# (kernel source, compiler tool chain, ccache, qemu, a static busybox for the initramfs).
# Run as root on Debian 12 (bookworm) or a derivative; CI runs it before the kernel jobs.
set -eu
if [ "$(id -u)" != 0 ]; then
    echo "install-deps.sh: must run as root (apt-get install)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends \
    linux-source-6.1 qemu-system-x86 busybox-static build-essential \
    bc bison flex libelf-dev libssl-dev ccache cpio xz-utils git dwarves kmod
