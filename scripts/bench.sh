#!/usr/bin/env bash
# Benchmark suite: builds the kernels and the plugin in build-bench (Release with
# debug info), generates the data into a temporary folder, runs the Google
# Benchmark kernels and the end-to-end GDAL runs, prints the ratio table with its
# targets and writes bench/RESULTS.md.
#
# usage: scripts/bench.sh
# environment: BENCH_BUILD_DIR (default <repo>/build-bench), BENCH_REPS (default 5),
#              BENCH_JOBS (default 2), BENCH_KEEP=1 keeps the data folder,
#              BENCH_PLUGIN_DIR (default: the build folder) where gdal_Zarr3.so is loaded from.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BENCH_BUILD_DIR:-$REPO/build-bench}
REPS=${BENCH_REPS:-5}
JOBS=${BENCH_JOBS:-2}
PY=/usr/bin/python3
PLUGIN_DIR=${BENCH_PLUGIN_DIR:-$BUILD} # folder holding gdal_Zarr3.so
START=$(date +%s)

cmake -S "$REPO" -B "$BUILD" -DZARR3_BUILD_BENCH=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" -j"$JOBS" --target zarr3_bench_gen zarr3_bench gdal_Zarr3

DATA=$(mktemp -d /tmp/zarr3-bench.XXXXXX)
cleanup() { [ "${BENCH_KEEP:-0}" = 1 ] && echo "data kept in $DATA" || rm -rf "$DATA"; }
trap cleanup EXIT

echo "== generating data in $DATA"
"$BUILD/bench/zarr3_bench_gen" "$DATA"

echo "== kernels"
ZARR3_BENCH_DATA=$DATA "$BUILD/bench/zarr3_bench" --benchmark_repetitions="$REPS" \
  --benchmark_report_aggregates_only=true --benchmark_min_time=0.2 \
  --benchmark_out="$DATA/kernels.json" --benchmark_out_format=json

echo "== end to end through GDAL"
$PY "$REPO/bench/e2e.py" --data "$DATA" --plugin-dir "$PLUGIN_DIR" --reps "$REPS" \
  --json "$DATA/e2e.json"

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$REPO" rev-parse --short HEAD)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores"
  echo "memory: $(free -m | awk '/Mem:/ {print $2}') MiB; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "kernel: $(uname -sr); compiler: $(c++ --version | head -1)"
  echo "zstd $(pkg-config --modversion libzstd 2>/dev/null || echo ?), libdeflate $(pkg-config --modversion libdeflate 2>/dev/null || echo ?), c-blosc $(pkg-config --modversion blosc 2>/dev/null || echo ?)"
} >"$DATA/machine.txt"

echo "== ratios"
$PY "$REPO/bench/report.py" "$DATA/kernels.json" "$DATA/e2e.json" "$REPO/bench/RESULTS.md" \
  "$DATA/machine.txt"
echo "(total $(($(date +%s) - START)) s; written bench/RESULTS.md)"
