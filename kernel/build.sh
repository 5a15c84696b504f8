#!/bin/sh
# build.sh: builds the kernel at one commit for culprit (the `--build` hook), incrementally.
#
# Hook mode (default): the commit is $CULPRIT_COMMIT (else HEAD of the current repository). The
# commit is checked out with `git checkout` in ONE shared source tree and built with `O=` into ONE
# shared object directory, so a step that changes one .c file recompiles one file (about 8 s), and
# ccache (with fixed KBUILD_BUILD_*) makes returning to an already built tree cheap. The result is
# copied to an artifact directory keyed by commit and config hash, so runs interleaving two commits
# never rebuild:
#     <state>/artifacts/<commit>/<config sha256>/{vmlinux,config,info,build.log}
#     <state>/artifacts/<commit>/current -> <config sha256>
# where <state> is $CULPRIT_KERNEL_STATE or <repo>/.git/culprit-kernel.
#
# Tree mode: `build.sh --tree SRC --out DIR` builds the plain source tree SRC (no git) with the same
# config into DIR/obj and leaves DIR/vmlinux, DIR/config and DIR/info (used for the test-suite cache).
#
# The config is `make tinyconfig` + kernel/configs/kvm_guest.config + kernel/guest.config (+ the
# fragments named in $CULPRIT_KERNEL_FRAGMENTS, space separated), then olddefconfig; every =y line
# of the fragments must survive, else the step fails naming the option.
# Environment: CULPRIT_KERNEL_JOBS (make -j, default: number of CPUs), CULPRIT_KERNEL_NICE (10),
# CULPRIT_KERNEL_IMAGE=bzImage to also build and keep arch/x86/boot/bzImage (for kexec on a lab box).
set -eu
. "$(dirname "$0")/lib.sh"

TREE=""
OUT=""
while [ $# -gt 0 ]; do
    case $1 in
        --tree) TREE=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        *) echo "usage: build.sh [--tree SRC --out DIR]" >&2; exit 2 ;;
    esac
done

JOBS=${CULPRIT_KERNEL_JOBS:-$(nproc)}
NICE=${CULPRIT_KERNEL_NICE:-10}
FRAGMENTS="kernel/configs/kvm_guest.config $KERNEL_SCRIPTS/guest.config ${CULPRIT_KERNEL_FRAGMENTS:-}"
command -v ccache >/dev/null 2>&1 && CC="ccache gcc" || CC=gcc

if [ -n "$TREE" ]; then
    [ -n "$OUT" ] || { echo "build.sh: --tree needs --out" >&2; exit 2; }
    COMMIT=tree
    SRC=$(cd "$TREE" && pwd)
    mkdir -p "$OUT"
    OUT=$(cd "$OUT" && pwd)
    OBJ=$OUT/obj
    CFG=$OUT/cfg
    LOCK=$OUT/lock
else
    COMMIT=${CULPRIT_COMMIT:-$(git rev-parse HEAD)}
    STATE=$(state_dir)
    SRC=$STATE/src
    OBJ=$STATE/obj
    CFG=$STATE/cfg
    LOCK=$STATE/lock
    mkdir -p "$STATE/artifacts"
fi
mkdir -p "$OBJ" "$CFG"

# One build at a time per state directory: two culprit processes on one repository queue here.
exec 9>"$LOCK"
flock 9

if [ -z "$TREE" ]; then
    REPO=$(dirname "$(git rev-parse --path-format=absolute --git-common-dir)")
    if [ ! -e "$SRC/.git" ]; then
        note "creating the shared build tree $SRC (once per repository)"
        git -C "$REPO" worktree add --detach "$SRC" "$COMMIT" >/dev/null 2>&1 \
            || die checkout "git worktree add $SRC"
    fi
    # Only files that differ are rewritten, so make rebuilds only what the step changed.
    git -C "$SRC" checkout --quiet --force --detach "$COMMIT" 2>&1 || die checkout "git checkout $COMMIT in $SRC"
    git -C "$SRC" clean -qfdx >/dev/null 2>&1 || true
fi

# 1. The config, generated in a scratch directory and copied over the build's .config only when it
#    differs, so an unchanged config never triggers a rebuild.
cd "$SRC"
log_cfg=$CFG/config.log
{
    make -s O="$CFG" tinyconfig &&
    ./scripts/kconfig/merge_config.sh -m -O "$CFG" "$CFG/.config" $FRAGMENTS &&
    make -s O="$CFG" olddefconfig
} >"$log_cfg" 2>&1 || { tail -20 "$log_cfg" >&2; die config "make tinyconfig/merge_config/olddefconfig (log $log_cfg)"; }
# kvm_guest.config names options of several architectures, so only our own fragments are checked.
for frag in $KERNEL_SCRIPTS/guest.config ${CULPRIT_KERNEL_FRAGMENTS:-}; do
    case $frag in /*) f=$frag ;; *) f=$SRC/$frag ;; esac
    [ -r "$f" ] || die config "config fragment $frag not found"
    missing=""
    for opt in $(sed -n 's/^\(CONFIG_[A-Za-z0-9_]*\)=y$/\1/p' "$f"); do
        grep -q "^$opt=y\$" "$CFG/.config" || missing="$missing $opt"
    done
    [ -z "$missing" ] || die config "these =y options of $frag did not survive olddefconfig (a dependency is missing):$missing"
done
CONFIG_SHA=$(sha256sum "$CFG/.config" | cut -c1-16)

if [ -n "$TREE" ]; then
    ART=$OUT
else
    ART=$STATE/artifacts/$COMMIT/$CONFIG_SHA
    if [ -s "$ART/vmlinux" ] && [ -s "$ART/info" ]; then
        ln -sfn "$CONFIG_SHA" "$STATE/artifacts/$COMMIT/current"
        note "commit $COMMIT config $CONFIG_SHA already built: $ART"
        exit 0
    fi
fi
mkdir -p "$ART"
cmp -s "$CFG/.config" "$OBJ/.config" 2>/dev/null || cp "$CFG/.config" "$OBJ/.config"

# 2. The build. LOCALVERSION puts the commit into `uname -r`, as the robot's kernels have it.
case $COMMIT in
    tree) LOCALVERSION=-culprit ;;
    *) LOCALVERSION=-g$(echo "$COMMIT" | cut -c1-12) ;;
esac
IMAGE_TARGET=""
[ "${CULPRIT_KERNEL_IMAGE:-vmlinux}" = bzImage ] && IMAGE_TARGET=bzImage
log=$ART/build.log
started=$(date +%s)
if ! nice -n "$NICE" make O="$OBJ" -j"$JOBS" CC="$CC" LOCALVERSION="$LOCALVERSION" vmlinux ${IMAGE_TARGET:-} >"$log" 2>&1; then
    tail -40 "$log" >&2
    df -h "$OBJ" | tail -1 | awk '{ if ($4 ~ /^0/) print "culprit-kernel: the disk holding the build is full" }' >&2
    die build "make vmlinux (log $log)"
fi
ended=$(date +%s)
RELEASE=$(make -s O="$OBJ" LOCALVERSION="$LOCALVERSION" kernelrelease 2>/dev/null) || die build "make kernelrelease"
cp "$OBJ/vmlinux" "$ART/vmlinux.tmp" && mv "$ART/vmlinux.tmp" "$ART/vmlinux" || die artifact "copy vmlinux to $ART (disk full?)"
cp "$OBJ/.config" "$ART/config"
[ -z "$IMAGE_TARGET" ] || cp "$OBJ/arch/x86/boot/bzImage" "$ART/bzImage" || die artifact "copy bzImage to $ART"
{
    echo "commit: $COMMIT"
    echo "kernel.release: $RELEASE"
    echo "kernel.config_sha256: $CONFIG_SHA"
    echo "kernel.compiler: $(gcc --version | head -1)"
    echo "build.seconds: $((ended - started))"
} >"$ART/info"
[ -n "$TREE" ] || ln -sfn "$CONFIG_SHA" "$STATE/artifacts/$COMMIT/current"
note "built $RELEASE (config $CONFIG_SHA) in $((ended - started)) s: $ART"
