#!/bin/sh
# deploy.sh: the `--deploy` hook of the lab recipe: puts the kernel built for $CULPRIT_COMMIT on the
# test box, boots it, and waits until the box is back running exactly that kernel.
#
# CULPRIT_KERNEL_BOX selects the box:
#   qemu (default)  the stand-in used on this machine: boots the artifact under qemu with no benchmark
#                   and checks that the guest agent comes up reporting the built release.
#   ssh://USER@HOST a bare-metal box reachable by ssh as root: copies the kernel image and the
#                   initramfs (or uses the box's own, CULPRIT_KERNEL_BOX_INITRD=none), loads it with
#                   `kexec -l` and jumps into it with `kexec -e` (or reboots into it when
#                   CULPRIT_KERNEL_BOX_REBOOT=1 and the box's boot loader is set up for "culprit"),
#                   then waits up to CULPRIT_KERNEL_BOX_WAIT seconds (default 600) for ssh to answer
#                   and checks `uname -r`. A box that does not come back makes the commit untestable.
# The ssh path needs a box with kexec-tools and a bzImage build (CULPRIT_KERNEL_IMAGE=bzImage in
# build.sh's environment); it is documented in docs/kernel.md. It was never run against a real box;
# crates/culprit/tests/cli/kernel.rs checks its steps against stand-in ssh and scp programs.
set -eu
. "$(dirname "$0")/lib.sh"
COMMIT=${CULPRIT_COMMIT:?deploy.sh runs as a culprit --deploy hook (CULPRIT_COMMIT is not set)}
ART=$(state_dir)/artifacts/$COMMIT/current
[ -s "$ART/info" ] || die deploy "no built kernel for this commit at $ART (run kernel/build.sh as --build)"
release=$(sed -n 's/^kernel.release: //p' "$ART/info")
BOX=${CULPRIT_KERNEL_BOX:-qemu}

case $BOX in
    qemu)
        out=$("$KERNEL_SCRIPTS/boot.sh" --bench none --timeout "${CULPRIT_KERNEL_BOX_WAIT:-600}") \
            || die deploy "the stand-in box did not come up with $release"
        echo "$out" | grep -qx "kernel.release: $release" || die deploy "the stand-in box runs another kernel"
        note "box qemu is up with $release"
        ;;
    ssh://*)
        target=${BOX#ssh://}
        image=$ART/${CULPRIT_KERNEL_IMAGE:-bzImage}
        [ -s "$image" ] || die deploy "$image missing: build with CULPRIT_KERNEL_IMAGE=bzImage for bare metal"
        ssh_opts="-o BatchMode=yes -o ConnectTimeout=10 -o StrictHostKeyChecking=accept-new"
        # shellcheck disable=SC2086
        scp $ssh_opts "$image" "$target:/boot/vmlinuz-culprit" || die deploy "copying the kernel to $target"
        initrd_arg=""
        if [ "${CULPRIT_KERNEL_BOX_INITRD:-}" != none ]; then
            initrd=$("$KERNEL_SCRIPTS/mkinitramfs.sh") || die deploy "kernel/mkinitramfs.sh"
            # shellcheck disable=SC2086
            scp $ssh_opts "$initrd" "$target:/boot/initrd-culprit.img" || die deploy "copying the initramfs to $target"
            initrd_arg="--initrd=/boot/initrd-culprit.img"
        fi
        if [ "${CULPRIT_KERNEL_BOX_REBOOT:-0}" = 1 ]; then
            # shellcheck disable=SC2086
            ssh $ssh_opts "$target" "grub-reboot culprit && systemctl reboot" || true
        else
            # The connection drops when the new kernel starts, so the exit status of kexec -e means nothing.
            # shellcheck disable=SC2086
            ssh $ssh_opts "$target" "kexec -l /boot/vmlinuz-culprit $initrd_arg --reuse-cmdline && (sleep 1; kexec -e) >/dev/null 2>&1 &" \
                || die deploy "kexec -l on $target"
        fi
        sleep 15
        waited=15 limit=${CULPRIT_KERNEL_BOX_WAIT:-600}
        # shellcheck disable=SC2086
        until got=$(ssh $ssh_opts "$target" uname -r 2>/dev/null); do
            waited=$((waited + 10))
            [ "$waited" -lt "$limit" ] || die deploy "$target did not come back within $limit s"
            sleep 10
        done
        [ "$got" = "$release" ] || die deploy "$target came back with $got, not $release (the kexec or the boot loader fell back)"
        note "box $target is up with $release"
        ;;
    *) die deploy "CULPRIT_KERNEL_BOX must be qemu or ssh://USER@HOST, not $BOX" ;;
esac
