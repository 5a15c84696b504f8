#!/usr/bin/env bash
# The quick start: builds culprit and runs the main job on this machine, then prints what was stored.
# Installs the Debian packages it needs when run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/debian-packages.sh
culprit_install_packages
if [ "$(id -u)" -eq 0 ] && [ -w /proc/sys/kernel/perf_event_paranoid ]; then
    echo -1 > /proc/sys/kernel/perf_event_paranoid
fi
cargo build --release --locked -q
culprit=target/release/culprit
export CULPRIT_DB="${CULPRIT_DB:-$PWD/demo.db}"
echo "== culprit run jobs/quick.yaml --repeat 3 --label demo   (store: $CULPRIT_DB)"
"$culprit" run jobs/quick.yaml --repeat 3 --label demo
echo
echo "== culprit results"
"$culprit" results
