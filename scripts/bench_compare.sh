#!/usr/bin/env bash
# Before/after check of a change: builds the plugin at REV (default: the
# commit before session 12's structural step) beside the current tree, then
# runs bench/e2e.py ROUNDS times for each, alternating A (REV) and B (this
# tree) on the same data, and prints bench/compare_builds.py's table (B/A per
# row against A's own run-to-run spread).
# usage: scripts/bench_compare.sh [REV] ; env BENCH_ROUNDS (default 3), BENCH_REPS (default 3),
#   BENCH_WRITES_ONLY=1 (only the gdal_translate write rows: e2e.py --peer-writes)
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REV=${1:-f4f73ee}
ROUNDS=${BENCH_ROUNDS:-3}
REPS=${BENCH_REPS:-3}
PY=/usr/bin/python3
ONLY=""
[ "${BENCH_WRITES_ONLY:-0}" = 1 ] && ONLY=--peer-writes
WORK=$(mktemp -d /tmp/zarr3-benchcmp.XXXXXX)
cleanup() {
  git -C "$REPO" worktree remove --force "$WORK/a-src" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
git -C "$REPO" worktree add -q --detach "$WORK/a-src" "$REV"
echo "== building A ($REV) and B ($(git -C "$REPO" rev-parse --short HEAD))"
cmake -S "$WORK/a-src" -B "$WORK/a" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$WORK/a" -j2 --target gdal_Zarr3 >/dev/null
cmake -S "$REPO" -B "$WORK/b" -DZARR3_BUILD_BENCH=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$WORK/b" -j2 --target gdal_Zarr3 zarr3_bench_gen >/dev/null
mkdir -p "$WORK/data"
"$WORK/b/bench/zarr3_bench_gen" "$WORK/data" >/dev/null
files=()
for ((i = 1; i <= ROUNDS; i++)); do
  for side in a b; do
    echo "== round $i, build $side (load $(cut -d' ' -f1 /proc/loadavg))"
    rm -rf "$WORK/data/e2e_writes" # each run's writes start from the same empty folder
    mkdir -p "$WORK/data/e2e_writes"
    $PY "$REPO/bench/e2e.py" --data "$WORK/data" --plugin-dir "$WORK/$side" --reps "$REPS" $ONLY \
      --json "$WORK/$side$i.json" 2>"$WORK/$side$i.err" ||
      { echo "e2e failed for build $side:"; tail -20 "$WORK/$side$i.err"; exit 1; }
    files+=("$WORK/$side$i.json")
  done
done
$PY "$REPO/bench/compare_builds.py" "${files[@]}"
