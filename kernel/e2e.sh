#!/bin/sh
# e2e.sh: the long end-to-end check of the kernel target. It makes the fixture history (Debian's
# linux-source-6.1 plus 12 commits, seed 000's should_we_balance() bug at one of them), bisects it
# with real kernel builds and qemu boots, checks that the bisect names the bug commit, and prints the
# robot's report mail for the session.
#
# usage: kernel/e2e.sh            (as root after kernel/install-deps.sh; takes 30-60 minutes cold)
# Environment: CULPRIT_KERNEL_WORK (default /var/tmp/culprit-kernel) holds the fixture repository,
# its build state and the result store; CULPRIT (default: target/release/culprit, built if missing);
# CULPRIT_E2E_MAX_RUNS (default 160) caps the bisect's boots.
# Exit status: 0 when the bug commit is named, 1 otherwise.
set -eu
KERNEL_DIR=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$KERNEL_DIR")
WORK=${CULPRIT_KERNEL_WORK:-/var/tmp/culprit-kernel}
REPO=$WORK/linux
DB=$WORK/e2e.db
MAX_RUNS=${CULPRIT_E2E_MAX_RUNS:-160}
export CULPRIT_KERNEL_SCRIPTS=$KERNEL_DIR

stamp() { echo "e2e: [$(date +%H:%M:%S)] $*" >&2; }
t0=$(date +%s)

CULPRIT=${CULPRIT:-$ROOT/target/release/culprit}
if [ ! -x "$CULPRIT" ]; then
    stamp "building culprit (release)"
    (cd "$ROOT" && nice -n 10 cargo build --release -q -p culprit)
fi

if [ ! -d "$REPO/.git" ]; then
    stamp "making the fixture history in $REPO"
    mkdir -p "$WORK"
    nice -n 10 "$KERNEL_DIR/make-fixture-history.sh" "$REPO"
fi
GOOD=$(git -C "$REPO" rev-parse fixture-good)
BAD=$(git -C "$REPO" rev-parse fixture-bad)
EXPECTED=$(git -C "$REPO" rev-parse fixture-culprit)
stamp "fixture ready: good $GOOD, bad $BAD, the bug is at $EXPECTED"

stamp "bisecting (the first build of a tree is cold: ~12 minutes on 2 idle cores)"
rc=0
"$CULPRIT" --db "$DB" bisect --repo "$REPO" --good "$GOOD" --bad "$BAD" \
    --job "$KERNEL_DIR/jobs/spread-pin0.yaml" --metric command.guest_idle \
    --build "$KERNEL_DIR/build.sh" --max-runs "$MAX_RUNS" --json >"$WORK/bisect.json" || rc=$?
t1=$(date +%s)
stamp "bisect exited with status $rc after $((t1 - t0)) s"
cat "$WORK/bisect.json"

session=$(sed -n 's/^  "session": \([0-9]*\),*/\1/p' "$WORK/bisect.json" | head -1)
found=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(c["sha"] for c in d.get("culprits", []) if c.get("located")))' "$WORK/bisect.json" 2>/dev/null || true)
if [ -n "$session" ]; then
    "$CULPRIT" --db "$DB" bisect log "$session" >"$WORK/bisect-log.txt" 2>&1 || true
    if "$CULPRIT" report --help >/dev/null 2>&1; then
        stamp "the robot's report for session $session"
        "$CULPRIT" --db "$DB" report "$session" || stamp "culprit report failed"
    fi
fi
case " $found " in
    *" $EXPECTED "*)
        stamp "PASS: the bisect named $EXPECTED, the should_we_balance() inversion, in $((t1 - t0)) s"
        exit 0
        ;;
    *)
        stamp "FAIL: the bisect named '${found:-nothing}', expected $EXPECTED"
        exit 1
        ;;
esac
