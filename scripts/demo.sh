#!/usr/bin/env bash
# The quick start: builds culprit, runs the main job on this machine, then bisects a real slowdown in a throwaway
# git repository and prints the culprit with its evidence and the robot's table. Installs the Debian packages it
# needs when run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/debian-packages.sh
culprit_install_packages
command -v cc >/dev/null || { echo "culprit demo: a C compiler is needed: apt-get install gcc make" >&2; exit 1; }
cargo build --release --locked -q
culprit=$PWD/target/release/culprit
export CULPRIT_DB="${CULPRIT_DB:-$PWD/demo.db}"

echo "== 1. culprit run jobs/quick.yaml --repeat 3 --label demo   (store: $CULPRIT_DB)"
"$culprit" run jobs/quick.yaml --repeat 3 --label demo
echo
echo "== culprit results"
"$culprit" results
echo

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bash tests/fixtures/make-slowdown-repo.sh "$work/repo" 24 15 12 30
good=$(git -C "$work/repo" rev-list --max-parents=0 HEAD)
echo "== 2. culprit bisect: 24 commits of a small C program; one adds 30% work, one does not build"
echo "   culprit bisect --repo $work/repo --good ${good:0:12} --bad HEAD --run ./bench --build 'make -s'"
"$culprit" bisect --repo "$work/repo" --good "$good" --bad HEAD --run ./bench --build 'make -s' | tee "$work/bisect.txt"
culprit_sha=$(sed -n 's/^culprit: \([0-9a-f]\{40\}\) .*/\1/p' "$work/bisect.txt" | head -n 1)
if [ -n "$culprit_sha" ]; then
    echo
    echo "== 3. culprit compare ${culprit_sha:0:12}^ ${culprit_sha:0:12}   (from the bisect's stored runs)"
    parent=$(git -C "$work/repo" rev-parse "$culprit_sha^")
    "$culprit" compare "$parent" "$culprit_sha" --metric '^(command|time)\.'
fi
