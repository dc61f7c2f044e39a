#!/usr/bin/env bash
# ASan + UBSan build (gcc, unity) of the core tests and the GDAL plugin; runs the unit tests,
# then the pytest suite with the ASan runtime preloaded into the (not
# instrumented) python and GDAL_DRIVER_PATH on the sanitized plugin.
# Prints a SANITIZE summary line; exits non-zero when anything fails or a
# sanitizer reports an error.
#   scripts/sanitize.sh [pytest args...]
# Env: SANITIZE_BUILD_DIR (default build-sanitize), JOBS (default 2), PYTHON.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
BUILD=${SANITIZE_BUILD_DIR:-$ROOT/build-sanitize}
JOBS=${JOBS:-2}
PYTHON=${PYTHON:-/usr/bin/python3}
mkdir -p "$BUILD"

# -O1 -g1: what ASan's own documentation advises (fast enough, stack traces
# with lines) and about half the compile time of -O2 -g (metadata.cpp 27 -> 13 s,
# test_array.cpp 49 -> 22 s under ASan here).
CC=gcc CXX=g++ cmake -S "$ROOT" -B "$BUILD" -DZARR3_WERROR=ON -DZARR3_SANITIZE=address,undefined \
  -DZARR3_UNITY_BUILD=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  >"$BUILD/cmake.log" 2>&1 \
  || { cat "$BUILD/cmake.log"; echo "SANITIZE: configure failed"; exit 1; }
cmake --build "$BUILD" -j"$JOBS" >"$BUILD/build.log" 2>&1 \
  || { tail -40 "$BUILD/build.log"; echo "SANITIZE: build failed"; exit 1; }

# Sanitizer reports abort the process (-fno-sanitize-recover=undefined, ASan
# halts on the first error); log them to files as well so nothing is missed.
LOGDIR="$BUILD/sanitizer-logs"
rm -rf "$LOGDIR" && mkdir -p "$LOGDIR"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$LOGDIR/ubsan"
rc=0

# The unit tests run as one process per test binary (not one per test through ctest: an ASan
# process start costs about 0.3 s, 750 of them 3.5 minutes), bounded in time.
: >"$BUILD/ctest.log"
unit_rc=0
# The unit tests run as jobs, two at a time (two cores): the longest test alone, started first
# (IcechunkManifestSplit's 100,000-chunk append: about 60 s under ASan, which made one of two
# equal shards take 110 s and the other 41 s), then the rest of zarr3_tests in four shards and
# zarr3_vsi_store_tests in one job.
HEAVY=IcechunkManifestSplit.AnAppendTo100000ChunksWritesUnderATenthOfOneManifest
UNIT_JOBS=("zarr3_tests heavy $HEAVY 0 1")
for shard in 0 1 2 3; do UNIT_JOBS+=("zarr3_tests s$shard -$HEAVY $shard 4"); done
UNIT_JOBS+=("zarr3_vsi_store_tests all * 0 1")
run_unit_job() { # bin name filter shard shards
  (cd "$BUILD" && GTEST_TOTAL_SHARDS=$5 GTEST_SHARD_INDEX=$4 GTEST_FILTER="$3" \
    ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:log_path=$LOGDIR/asan-$1" \
    timeout 1200 "./$1" --gtest_brief=1 >"$BUILD/unit-$1-$2.log" 2>&1
   echo $? >"$BUILD/unit-$1-$2.rc")
}
running=0
for job in "${UNIT_JOBS[@]}"; do
  read -r bin name filter shard shards <<<"$job"
  [ -x "$BUILD/$bin" ] || continue
  run_unit_job "$bin" "$name" "$filter" "$shard" "$shards" &
  running=$((running + 1))
  if [ $running -ge 2 ]; then wait -n || true; running=$((running - 1)); fi
done
wait
for job in "${UNIT_JOBS[@]}"; do
  read -r bin name _ <<<"$job"
  [ -x "$BUILD/$bin" ] || continue
  tee -a "$BUILD/ctest.log" <"$BUILD/unit-$bin-$name.log"
  st=$(cat "$BUILD/unit-$bin-$name.rc")
  [ "$st" -eq 0 ] || { rc=1; unit_rc=1; echo "$bin $name: exit $st" | tee -a "$BUILD/ctest.log"; }
done

# pytest workers (pytest-xdist: tests handed out one by one; those sharing /tmp/gdal-zarr3-archive, marked xdist_group, run in one worker): PYTEST_JOBS, default 2; 1 = one process.
PYTEST_JOBS=${PYTEST_JOBS:-2}
PYTEST_PAR=""
if [ "$PYTEST_JOBS" -gt 1 ] && "$PYTHON" -c 'import xdist' 2>/dev/null; then
  PYTEST_PAR="-n $PYTEST_JOBS --dist loadgroup"
fi

# The applications' tests (QGIS, rasterio, rioxarray, dask.distributed) are the apps leg's
# (scripts/test-apps.sh): under the ASan runtime they start QGIS and worker processes for plugin
# code the GDAL tests here already run.
APP_TESTS=(--ignore="$ROOT/autotest/test_qgis.py" --ignore="$ROOT/autotest/test_rasterio.py"
  --ignore="$ROOT/autotest/test_rioxarray.py" --ignore="$ROOT/autotest/test_dask.py")
# The benchmarks' smoke tests (autotest/test_bench_*.py) check that each bench script runs and
# prints its rows, at a tiny size: the plugin code they reach is the functional tests' (run here),
# and under ASan they cost minutes of process starts and timing loops (`make test` runs them).
for t in "$ROOT"/autotest/test_bench_*.py; do APP_TESTS+=(--ignore="$t"); done
# The README's examples (autotest/test_readme.py: every command of the README, `make demo` twice,
# about two minutes of one worker under ASan): their plugin code is the functional tests'.
APP_TESTS+=(--ignore="$ROOT/autotest/test_readme.py")

ASAN_RT=$(gcc -print-file-name=libasan.so)
# libstdc++ must be loaded with the runtime: python itself does not link it, and
# ASan's __cxa_throw interceptor aborts when the real symbol is not there yet.
STDCXX_RT=$(gcc -print-file-name=libstdc++.so.6)
# python leaks by design (detect_leaks=0); GDAL and numpy are not
# instrumented, hence no container-overflow checks across them.
LD_PRELOAD="$ASAN_RT $STDCXX_RT" \
  ASAN_OPTIONS="detect_leaks=0:detect_container_overflow=0:log_path=$LOGDIR/asan-pytest" \
  GDAL_DRIVER_PATH="$BUILD" "$PYTHON" -m pytest "$ROOT/autotest" -q -p no:cacheprovider --durations=25 $PYTEST_PAR "${APP_TESTS[@]}" "$@" \
  2>&1 | tee "$BUILD/pytest.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1

reports=$(cat "$LOGDIR"/* 2>/dev/null | grep -cE "ERROR: (Address|Leak)Sanitizer|runtime error:")
if [ "$reports" -gt 0 ]; then
  rc=1
  echo "=== sanitizer reports ($LOGDIR)"
  grep -hE -A12 "ERROR: (Address|Leak)Sanitizer|runtime error:" "$LOGDIR"/* | head -80
fi

sum_of() { sed -nE "s/^\[  $1 +\] ([0-9]+) tests?.*/\1/p" "$BUILD/ctest.log" | awk '{s += $1} END {print s + 0}'; }
ct_passed=$(sum_of PASSED); ct_failed=$(sum_of FAILED)
[ "$unit_rc" -eq 0 ] || [ "$ct_failed" -gt 0 ] || ct_failed=1  # a binary that died before its summary
py=$(grep -E '[0-9]+ (passed|failed|error|errors|skipped)' "$BUILD/pytest.log" | tail -1)
count() { grep -oE "[0-9]+ $1" <<<"$py" | grep -oE '[0-9]+' || echo 0; }
py_failed=$(( $(count failed) + $(count error) ))
echo "SANITIZE: unit tests $ct_passed passed, $ct_failed failed; pytest $(count passed) passed, $py_failed failed, $(count skipped) skipped; sanitizer reports $reports"
exit $rc
