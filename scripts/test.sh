#!/usr/bin/env bash
# Runs every test of the workspace: unit, golden (recorded real outputs) and short real runs of the installed
# benchmarks. Installs the Debian packages the tests need when run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/debian-packages.sh
culprit_install_packages
# perf needs access to system-wide events for the perf-stat and perf-profile monitors' tests.
if [ "$(id -u)" -eq 0 ] && [ -w /proc/sys/kernel/perf_event_paranoid ]; then
    echo -1 > /proc/sys/kernel/perf_event_paranoid
fi
# The PostgreSQL store's tests need a server: a throwaway one on 127.0.0.1 (installed when missing, as root).
if [ -z "${CULPRIT_TEST_PG_URL:-}" ] && [ "${CULPRIT_SKIP_POSTGRES:-}" != 1 ]; then
    pg_export="$(bash scripts/postgres-test-server.sh)"
    eval "$pg_export"
    export CULPRIT_TEST_PG_URL
fi
cargo test --workspace --profile ci --locked "$@"
