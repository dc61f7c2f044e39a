#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) and runs each for SECONDS
# (default 30) on a temporary copy of its seed corpus (fuzz/corpus/<target>),
# so the committed corpus never grows. Crash reproducers go to
# fuzz/crashes/<target>/ (not committed). Fails when any target finds a crash.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
# Env: FUZZ_BUILD_DIR (default build-fuzz), FUZZ_JOBS (build jobs, default 2), FUZZ_RUN_JOBS
# (targets run at once, default 2).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
SECONDS_PER_TARGET=${1:-30}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(fuzz_metadata fuzz_rectilinear fuzz_shard fuzz_codecs fuzz_array
                                  fuzz_multiscales fuzz_string_shard fuzz_compact fuzz_icechunk)
BUILD=${FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
JOBS=${FUZZ_JOBS:-2}

need_clang() {
  command -v clang++ >/dev/null 2>&1 || return 0
  local rt
  rt=$(clang++ -print-resource-dir 2>/dev/null)/lib/linux/libclang_rt.fuzzer-x86_64.a
  [ -f "$rt" ] || return 0
  return 1
}
if need_clang; then
  echo "fuzz.sh: installing clang and libclang-rt-14-dev"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq clang libclang-rt-14-dev >/dev/null || { echo "fuzz.sh: cannot install clang"; exit 1; }
fi

mkdir -p "$BUILD"
CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD" -DZARR3_BUILD_FUZZ=ON -DZARR3_BUILD_DRIVER=OFF -DZARR3_UNITY_BUILD=ON \
  -DZARR3_BUILD_TESTS=OFF -DZARR3_SANITIZE=address,undefined >"$BUILD/fuzz-cmake.log" 2>&1 \
  || { cat "$BUILD/fuzz-cmake.log"; echo "fuzz.sh: configure failed"; exit 1; }
cmake --build "$BUILD" -j"$JOBS" --target "${TARGETS[@]}" || { echo "fuzz.sh: build failed"; exit 1; }

declare -A MAXLEN=([fuzz_metadata]=16384 [fuzz_rectilinear]=4096 [fuzz_shard]=8192
                   [fuzz_codecs]=16384 [fuzz_array]=65536 [fuzz_multiscales]=8192
                   [fuzz_string_shard]=32768 [fuzz_compact]=4096 [fuzz_icechunk]=16384)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# run_target T: one target for SECONDS_PER_TARGET on its seed copy; its summary line goes to
# $WORK/T.summary, its exit status to $WORK/T.rc.
run_target() {
  local t=$1 log="$WORK/$1.log" rc execs state=ok
  mkdir -p "$WORK/$t" "$ROOT/fuzz/crashes/$t"
  cp -r "$ROOT/fuzz/corpus/$t/." "$WORK/$t/" 2>/dev/null || true
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
    "$BUILD/fuzz/$t" "$WORK/$t" -max_total_time="$SECONDS_PER_TARGET" \
      -max_len="${MAXLEN[$t]:-8192}" -rss_limit_mb=1024 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$ROOT/fuzz/crashes/$t/" >"$log" 2>&1
  rc=$?
  execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -1)
  [ $rc -eq 0 ] || state=FAILED
  printf '%-18s %-7s %s execs\n' "$t" "$state" "${execs:-?}" >"$WORK/$t.summary"
  echo $rc >"$WORK/$t.rc"
}

# The targets run FUZZ_RUN_JOBS at a time (default 2: one per core), each for the same time.
RUN_JOBS=${FUZZ_RUN_JOBS:-2}
running=0
for t in "${TARGETS[@]}"; do
  echo "=== $t: ${SECONDS_PER_TARGET}s"
  run_target "$t" &
  running=$((running + 1))
  if [ $running -ge "$RUN_JOBS" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait
failed=0
summary=()
for t in "${TARGETS[@]}"; do
  summary+=("$(cat "$WORK/$t.summary" 2>/dev/null || printf '%-18s FAILED  (no result)' "$t")")
  if [ "$(cat "$WORK/$t.rc" 2>/dev/null || echo 1)" -ne 0 ]; then
    failed=1
    echo "=== $t failed:"
    grep -E "ERROR|SUMMARY|==[0-9]+==|artifact|FUZZ_CHECK|runtime error|Test unit written" "$WORK/$t.log" | head -20
  fi
done
echo "=== fuzz summary (${SECONDS_PER_TARGET}s per target)"
printf '%s\n' "${summary[@]}"
[ $failed -eq 0 ] && echo "FUZZ: no crashes" || echo "FUZZ: crashes found (reproducers in fuzz/crashes/)"
exit $failed
