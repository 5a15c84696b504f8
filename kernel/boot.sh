#!/bin/sh
# boot.sh: boots a built kernel with the benchmark initramfs under qemu and prints the guest's
# results (the `--run` hook of a culprit kernel bisect, or a standalone runner).
#
# usage: boot.sh [--kernel VMLINUX] [--smp N] [--mem SIZE] [--timeout SECONDS] [--runs N]
#                [--loops N] [--tasks N] [--mode pin0|free] [--bench spread|none]
#                [--accel auto|tcg|kvm] [--append "EXTRA CMDLINE"]
# Without --kernel the kernel is the artifact build.sh made for $CULPRIT_COMMIT.
#
# Prints on stdout the guest's lkp-style "key: value" lines (kernel.release, kernel.config_sha256,
# spread.*), plus kernel.commit and boot.seconds from the host side. The whole serial console is
# kept next to the artifact (console-<time>.log). Exits non-zero, naming the step and the commit,
# when qemu fails, the guest panics, hangs past the timeout, reports an error, or boots a kernel
# other than the one built for the commit: culprit then records the commit as untestable.
#
# Acceleration: KVM only when /dev/kvm exists and the CPU shows vmx or svm (a software hypervisor
# such as kvm_pvm cannot boot a stock guest, see docs/kernel.md); qemu TCG (multi-threaded) otherwise.
set -eu
. "$(dirname "$0")/lib.sh"

KERNEL="" SMP=2 MEM=1G TIMEOUT=600 RUNS=8 LOOPS=150000000 TASKS=0 MODE=pin0 BENCH=spread ACCEL=auto APPEND=""
while [ $# -gt 0 ]; do
    case $1 in
        --kernel) KERNEL=$2 ;;
        --smp) SMP=$2 ;;
        --mem) MEM=$2 ;;
        --timeout) TIMEOUT=$2 ;;
        --runs) RUNS=$2 ;;
        --loops) LOOPS=$2 ;;
        --tasks) TASKS=$2 ;;
        --mode) MODE=$2 ;;
        --bench) BENCH=$2 ;;
        --accel) ACCEL=$2 ;;
        --append) APPEND=$2 ;;
        *) echo "boot.sh: unknown argument $1 (see the usage at the top of kernel/boot.sh)" >&2; exit 2 ;;
    esac
    shift 2
done

COMMIT=${CULPRIT_COMMIT:-}
INFO=""
if [ -z "$KERNEL" ]; then
    [ -n "$COMMIT" ] || die boot "no --kernel given and no \$CULPRIT_COMMIT set"
    ART=$(state_dir)/artifacts/$COMMIT/current
    KERNEL=$ART/vmlinux
    INFO=$ART/info
    [ -s "$KERNEL" ] || die boot "no built kernel at $KERNEL (did the --build hook kernel/build.sh run?)"
    LOGDIR=$ART
else
    [ -s "$KERNEL" ] || die boot "kernel image $KERNEL not found"
    [ -s "$(dirname "$KERNEL")/info" ] && INFO=$(dirname "$KERNEL")/info
    LOGDIR=${CULPRIT_KERNEL_LOGS:-${TMPDIR:-/tmp}}
fi
command -v qemu-system-x86_64 >/dev/null 2>&1 || die boot "qemu-system-x86_64 not installed (kernel/install-deps.sh)"
INITRD=$("$KERNEL_SCRIPTS/mkinitramfs.sh") || die initramfs "kernel/mkinitramfs.sh"

if [ "$ACCEL" = auto ]; then
    if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then ACCEL=kvm; else ACCEL=tcg; fi
fi
case $ACCEL in
    kvm) ACCEL_ARGS="-accel kvm -cpu host" ;;
    tcg) ACCEL_ARGS="-accel tcg,thread=multi -cpu max" ;;
    *) die boot "--accel must be auto, tcg or kvm" ;;
esac

mkdir -p "$LOGDIR"
LOG=$LOGDIR/console-$(date +%Y%m%dT%H%M%S)-$$.log
CMDLINE="console=ttyS0 quiet panic=-1 no_timer_check culprit.bench=$BENCH culprit.runs=$RUNS culprit.loops=$LOOPS culprit.tasks=$TASKS culprit.mode=$MODE $APPEND"
# no_timer_check: on a heavily loaded host, TCG delivers the first timer interrupts late and 6.1 panics with
# "IO-APIC + timer doesn't work" (seen here at load average 49); virtual machines skip that check.
started=$(date +%s.%N)
rc=0
# -no-reboot turns the guest's panic=-1 reboot into a qemu exit; timeout catches a hung guest.
# shellcheck disable=SC2086
timeout --kill-after=10 "$TIMEOUT" qemu-system-x86_64 $ACCEL_ARGS -smp "$SMP" -m "$MEM" \
    -kernel "$KERNEL" -initrd "$INITRD" -append "$CMDLINE" \
    -display none -monitor none -serial "file:$LOG" -no-reboot -net none </dev/null >"$LOG.qemu" 2>&1 || rc=$?
ended=$(date +%s.%N)
# A guest killed by the timeout before qemu opened its serial file (a short --timeout on a loaded host) leaves no
# console log: an empty one keeps the report on the timeout instead of on the missing file.
touch "$LOG"
tr -d '\r' <"$LOG" >"$LOG.txt" && mv "$LOG.txt" "$LOG"

fail() {
    tail -25 "$LOG" >&2 || true
    [ -s "$LOG.qemu" ] && cat "$LOG.qemu" >&2
    die "$1" "$2 (console log $LOG)"
}
[ "$rc" != 124 ] && [ "$rc" != 137 ] || fail boot "the guest did not finish within $TIMEOUT s (hung, or too slow)"
grep -q "Kernel panic" "$LOG" && fail boot "the guest kernel panicked"
[ "$rc" = 0 ] || fail boot "qemu exited with status $rc"
grep -q "^@@ CULPRIT BEGIN" "$LOG" || fail boot "the guest never reached the agent (no '@@ CULPRIT BEGIN' on the console)"
grep -q "^@@ CULPRIT END" "$LOG" || fail benchmark "the guest agent stopped before '@@ CULPRIT END'"
results=$(sed -n '/^@@ CULPRIT BEGIN/,/^@@ CULPRIT END/p' "$LOG" | grep -v '^@@ ')
status=$(sed -n 's/^@@ CULPRIT END status=\([0-9]*\).*/\1/p' "$LOG" | tail -1)
echo "$results" | grep -q '^guest.error:' && fail benchmark "$(echo "$results" | sed -n 's/^guest.error: //p' | head -1)"
[ "$status" = 0 ] || fail benchmark "the benchmark exited with status $status"

# The guest must run the kernel built for this commit: its release carries the commit's abbreviation.
if [ -n "$INFO" ]; then
    want=$(sed -n 's/^kernel.release: //p' "$INFO")
    got=$(echo "$results" | sed -n 's/^kernel.release: //p')
    [ "$want" = "$got" ] || fail boot "the guest runs $got, not the built $want"
    sed -n 's/^\(commit\): /kernel.commit: /p; s/^kernel.compiler: /kernel.compiler: /p' "$INFO"
fi
echo "$results"
echo "boot.accel: $ACCEL"
echo "boot.seconds: $(echo "$ended $started" | awk '{ printf "%.2f", $1 - $2 }')"
echo "boot.console_log: $LOG"
