#!/usr/bin/env bash
# Culprit's change-point engine and Apache Otava on the same seeded series, side by side.
# Usage: bash bench/otava/compare.sh [--sizes 1000,10000,100000] [--seed 7 | --seeds 1..=20]
# With several seeds each row pools the counts of all seeds and gives the mean time per series.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir="$(mktemp -d "${TMPDIR:-/tmp}/culprit-changepoint-bench.XXXXXX")"
trap 'rm -rf "$dir"' EXIT
echo "== Culprit (culprit_core::changepoint, release build)"
(cd "$root" && cargo run --release --quiet -p culprit-core --example changepoint_bench -- --out "$dir" "$@")
echo
echo "== Apache Otava 0.8.0 (compute_change_points, window 50, max p-value 0.001)"
bash "$root/bench/otava/run.sh" "$dir"
echo
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr)"
