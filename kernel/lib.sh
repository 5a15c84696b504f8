# lib.sh: shell helpers shared by the culprit kernel scripts (sourced, not run): where the shared
# build state lives, logging that names the step and the commit, and the pinned build environment.

# The directory holding these scripts, whatever the caller's working directory is.
KERNEL_SCRIPTS=$(cd "$(dirname "$0")" && pwd)

# die STEP MESSAGE: one clear line naming the step and the commit, then a non-zero exit,
# which culprit records as "untestable" for the commit, never as "bad".
die() {
    step=$1; shift
    echo "culprit-kernel: $step failed at commit ${COMMIT:-unknown}: $*" >&2
    exit 1
}

note() {
    echo "culprit-kernel: $*" >&2
}

# state_dir: one directory per kernel repository holding the build tree (src), the single
# incremental object directory (obj), the config scratch directory (cfg) and the per-commit
# artifacts. $CULPRIT_KERNEL_STATE overrides it; by default it sits inside the repository's
# .git, next to culprit's own worktrees, so it never shows up as untracked files.
state_dir() {
    if [ -n "${CULPRIT_KERNEL_STATE:-}" ]; then
        echo "$CULPRIT_KERNEL_STATE"
        return
    fi
    common=$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null) \
        || die setup "not inside a git repository (run as a culprit --build hook, or set CULPRIT_KERNEL_STATE)"
    echo "$common/culprit-kernel"
}

# Fixed build identity so that ccache hits and two builds of one commit give the same vmlinux.
export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2015'
export KBUILD_BUILD_USER=culprit
export KBUILD_BUILD_HOST=culprit
export KBUILD_BUILD_VERSION=1
# Every layout keeps src/ and obj/ side by side, so with absolute paths made relative, one source
# tree built in two places (a fixture repository, the test-suite cache) shares ccache entries.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-/}
