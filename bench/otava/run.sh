#!/usr/bin/env bash
# Runs Apache Otava's default change-point analysis (window 50, max p-value 0.001, as its AnalysisOptions
# defaults) on the CSV series written by `changepoint_bench`, timing it and scoring it with the same rule
# (a found point is right within 5 points of a true one, one-to-one). Usage: bash bench/otava/run.sh DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:-${TMPDIR:-/tmp}/culprit-changepoint-bench}"
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import otava' 2>/dev/null; then
    "$venv/bin/pip" install --quiet 'apache-otava==0.8.0'
fi
exec "$venv/bin/python" "$here/score.py" "$dir"
