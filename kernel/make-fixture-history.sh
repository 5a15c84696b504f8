#!/bin/sh
# make-fixture-history.sh: makes the kernel bisect fixture, a git repository of Debian's
# linux-source-6.1 with a dozen ordinary commits on top, one of which re-introduces seed 000's bug
# (2013's should_we_balance() inversion, ported to 6.1: the designated balancing CPU is chosen with
# `!=` instead of `==`, so periodic and nohz-idle balancing never run on a flat SMP topology).
#
# usage: make-fixture-history.sh DEST
# Leaves tags fixture-good (the unmodified tree), fixture-culprit (the bug commit) and fixture-bad
# (the last commit). Authors and dates are fixed, so the same tarball always gives the same SHAs.
# Takes about a minute (tar 15-25 s, the first commit 25 s) and 1.7 GB of disk.
set -eu
DEST=${1:?usage: make-fixture-history.sh DEST}
TARBALL=${CULPRIT_KERNEL_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
[ -r "$TARBALL" ] || { echo "make-fixture-history.sh: $TARBALL not found: run kernel/install-deps.sh (linux-source-6.1)" >&2; exit 1; }
[ ! -e "$DEST" ] || { echo "make-fixture-history.sh: $DEST exists; remove it first" >&2; exit 1; }

mkdir -p "$DEST"
tar xf "$TARBALL" -C "$DEST" --strip-components=1
cd "$DEST"
# Debian's packaging .gitignore ends with "/*" and "!/debian/", which would hide the whole tree from git.
perl -0pi -e 's{^/\*\n!/debian/\n}{}m' .gitignore
if grep -qx '/\*' .gitignore; then
    echo "make-fixture-history.sh: could not remove Debian's '/*' line from .gitignore" >&2
    exit 1
fi

export GIT_AUTHOR_NAME="Culprit Fixture" GIT_AUTHOR_EMAIL="fixture@culprit.invalid"
export GIT_COMMITTER_NAME="Culprit Fixture" GIT_COMMITTER_EMAIL="fixture@culprit.invalid"
day=0
commit() {
    day=$((day + 1))
    export GIT_AUTHOR_DATE="2024-01-$(printf %02d "$day")T12:00:00Z"
    export GIT_COMMITTER_DATE="$GIT_AUTHOR_DATE"
    git commit -q -m "$1" -m "$2"
}

git init -q -b master .
git add -A
commit "Linux $(make -s kernelversion) (Debian linux-source-6.1)" "The unmodified Debian source tree, less its packaging .gitignore lines."
git tag fixture-good

# edit FILE OLD NEW: replace the one exact occurrence of OLD in FILE, or fail loudly.
edit() {
    OLD=$2 NEW=$3 perl -0pi -e '$n = s/\Q$ENV{OLD}\E/$ENV{NEW}/; die "make-fixture-history.sh: text not found in $ARGV\n" unless $n' "$1"
    git add "$1"
}

edit Documentation/scheduler/sched-design-CFS.rst "scheduler implemented by Ingo" "scheduler, implemented by Ingo"
commit "Documentation: sched-design-CFS: add a missing comma" "Reads better."

edit kernel/printk/printk.c " *  linux/kernel/printk.c" " *  linux/kernel/printk/printk.c"
commit "printk: name the right file in the header comment" "The file moved to kernel/printk/ long ago."

edit init/main.c 'pr_info("Run %s as init process\n", init_filename);' 'pr_info("Run %s as the init process\n", init_filename);'
commit "init: say \"the init process\" in the boot message" "A small wording fix in a boot-time message."

edit mm/Kconfig "for so called swap devices" "for so-called swap devices"
commit "mm: Kconfig: hyphenate so-called in the SWAP help" "Help text only."

edit kernel/sched/core.c " *  Core kernel scheduler code and related syscalls" " *  Core kernel scheduler code and the related syscalls"
commit "sched/core: reword the header comment" "Comment only."

edit net/unix/af_unix.c " * NET4:	Implementation of BSD Unix domain sockets." " * NET4:	Implementation of BSD Unix domain (AF_UNIX) sockets."
commit "af_unix: name the address family in the header comment" "Comment only."

# The culprit: both designated-balancer returns inverted, as 23f0d2093c78 did in 2013.
edit kernel/sched/fair.c "		return cpu == env->dst_cpu;" "		return cpu != env->dst_cpu;"
edit kernel/sched/fair.c "	return group_balance_cpu(sg) == env->dst_cpu;" "	return group_balance_cpu(sg) != env->dst_cpu;"
commit "sched/fair: Rework the designated balancer test in should_we_balance()" \
    "Decide the balancing CPU in one place for the idle and the busy case."
git tag fixture-culprit

edit drivers/tty/serial/8250/8250_core.c "driver for 8250/16550-type serial ports" "driver for 8250/16550-type UART serial ports"
commit "serial: 8250: say UART in the header comment" "Comment only."

edit lib/string.c " *  linux/lib/string.c" " *  lib/string.c"
commit "lib/string: drop the linux/ prefix from the header comment" "Comment only."

edit kernel/fork.c " *  linux/kernel/fork.c" " *  kernel/fork.c"
commit "fork: drop the linux/ prefix from the header comment" "Comment only."

edit fs/ext4/super.c " *  linux/fs/ext4/super.c" " *  fs/ext4/super.c"
commit "ext4: drop the linux/ prefix from the header comment" "Comment only."

edit kernel/sched/fair.c " * Completely Fair Scheduling (CFS) Class (SCHED_NORMAL/SCHED_BATCH)" " * Completely Fair Scheduling (CFS) class (SCHED_NORMAL/SCHED_BATCH)"
commit "sched/fair: lower-case 'class' in the header comment" "Comment only."
git tag fixture-bad

echo "fixture: $DEST: $(git rev-list --count fixture-good..fixture-bad) commits after fixture-good; culprit $(git rev-parse fixture-culprit)"
