#!/usr/bin/env bash
# Interop leg: check stores written by the Zarr3 plugin read bit-exact in zarr-python's development
# line (../shared/zarr-python-dev/zp.sh, in a Debian 13 chroot; it reads and writes rectilinear grids,
# the newer data types and codecs) and zarrita.js (npm, host node), and the reverse; then runs
# autotest/test_interop.py with the host's GDAL + the plugin built in $ZARR3_BUILD_DIR.
# Also writes Icechunk repositories with the real Icechunk (npm @earthmover/icechunk, run in the
# chroot: scripts/icechunk/) and runs autotest/test_icechunk_interop.py on them, and has Icechunk read
# and commit on repositories this plugin wrote (core writer and zarr3 tools: icechunk_check_written);
# this needs zarr3_tests and zarr3 in $ZARR3_BUILD_DIR (`make test-interop` builds them).
#
# usage: scripts/interop.sh [extra pytest args, e.g. -k plugin_written]
# environment:
#   ZARR3_BUILD_DIR   host build dir holding gdal_Zarr3.so (default: <repo>/build; built if missing)
#   INTEROP_CHROOT    a prepared chroot to reuse (from `COMPAT_KEEP=1 scripts/compat.sh` or
#                     `COMPAT_DIR=... scripts/compat.sh --setup-only`); default: create a fresh one
#                     (/tmp/zarr3-trixie-$$, removed afterwards unless COMPAT_KEEP=1)
#   COMPAT_MIRROR     Debian mirror for a fresh chroot (default: the host's)
#   INTEROP_PYTHON    python with GDAL bindings for the tests (default /usr/bin/python3)
#   INTEROP_ICECHUNK  0: no Icechunk fixtures and tests (default 1)
#   INTEROP_ICECHUNK_BENCH  0: without the one run of the Icechunk bench rows (default 1)
# Needs root (chroot, mount, unshare) and node >= 18 with npm.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
# shellcheck source=compat/chroot_lib.sh
source "$HERE/compat/chroot_lib.sh"
# shellcheck source=icechunk/fixtures_lib.sh
source "$HERE/icechunk/fixtures_lib.sh"
COMPAT_LOG_TAG=interop

SUITE=${COMPAT_SUITE:-trixie}
BUILD_DIR=${ZARR3_BUILD_DIR:-$REPO/build}
SHARED=$(realpath -m "$REPO/../shared")
PY=${INTEROP_PYTHON:-/usr/bin/python3}
# shellcheck disable=SC2034 # read by chroot_release
KEEP=${COMPAT_KEEP:-0}

if [ "${_INTEROP_INNER:-0}" != 1 ]; then
  [ "$(id -u)" = 0 ] || { clog "needs root (chroot, mount)"; exit 2; }
  T0=$(date +%s)
  # ---- node dependencies (zarrita.js), from the committed lock file
  if [ ! -d "$HERE/interop/node_modules/zarrita" ] ||
    [ "$HERE/interop/package-lock.json" -nt "$HERE/interop/node_modules/.package-lock.json" ]; then
    step npm-ci _to_log /tmp/zarr3-npm-$$.log npm ci --prefix "$HERE/interop" --no-audit --no-fund ||
      { cat /tmp/zarr3-npm-$$.log >&2; exit 1; }
    rm -f /tmp/zarr3-npm-$$.log
  fi
  clog "zarrita: $(node "$HERE/interop/zarrita_io.mjs" version)"
  # ---- plugin on the host
  if [ ! -e "$BUILD_DIR/gdal_Zarr3.so" ]; then
    step plugin-build bash -c 'cmake -S "$0" -B "$1" -DZARR3_WERROR=ON >/dev/null &&
      cmake --build "$1" -j"$(nproc)" --target gdal_Zarr3' "$REPO" "$BUILD_DIR" ||
      clog "warning: plugin build failed in $BUILD_DIR; the GDAL-side tests will fail"
  fi
  # ---- chroot with zarr-python
  chroot_pick_prepared "${INTEROP_CHROOT:-}"
  TMPD=$(mktemp -d /tmp/zarr3-interop-XXXXXX)
  cleanup() {
    # TMPD was only bind-mounted inside the (now gone) private namespace
    if [ -z "$(mounts_below "$TMPD")" ]; then rm -rf --one-file-system "$TMPD"; fi
    clog "total wall time: $(($(date +%s) - T0))s"
  }
  chroot_outer_traps cleanup
  chroot_mirror
  _INTEROP_INNER=1 ROOT="$ROOT" TMPD="$TMPD" COMPAT_MIRROR="$MIRROR" \
    unshare --mount --propagation private bash "$0" "$@"
  exit $?
fi

# ------------------------------------------------------------------ inner: private mount namespace
chroot_inner_trap
chroot_prepare "$ROOT" "$SUITE" "$COMPAT_MIRROR" || exit 1
bind_same "$ROOT" "$REPO" ro
bind_shared "$ROOT" "$REPO" "$SHARED"
bind_same "$ROOT" "$TMPD" rw
ZPDEV="$SHARED/zarr-python-dev/zp.sh"
[ -f "$ZPDEV" ] || { clog "missing $ZPDEV (zarr-python's development line)"; exit 2; }
ZPY="chroot $ROOT /usr/bin/env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME=/root PYTHONDONTWRITEBYTECODE=1 sh $ZPDEV $REPO/scripts/interop/zarr_python_io.py"
clog "zarr-python: $($ZPY version)"
export ZARR3_INTEROP=1 ZARR3_ZARR_PYTHON_CMD="$ZPY" ZARR3_INTEROP_TMP="$TMPD"
export ZARR3_ZARRITA_CMD="node $REPO/scripts/interop/zarrita_io.mjs"
export GDAL_DRIVER_PATH=$BUILD_DIR
export ZARR3_CONFORMANCE="$REPO/testdata/conformance"
rc=0
TESTS=("$REPO/autotest/test_interop.py" "$REPO/autotest/test_interop_timeseries.py"
  "$REPO/autotest/test_interop_strings.py" "$REPO/autotest/test_interop_numcodecs.py")
if [ "${INTEROP_ICECHUNK:-1}" = 1 ]; then
  # Set even when writing failed: the tests then fail on the missing fixtures.json instead of skipping.
  export ZARR3_ICECHUNK_FIXTURES="$TMPD/icechunk/fixtures"
  icechunk_fixtures "$ROOT" "$REPO" "$TMPD/icechunk" || { clog "Icechunk fixtures FAILED"; rc=1; }
  # What the plugin writes (core writer, zarr3 tools), read and committed on by the real Icechunk.
  T_WRITTEN=$(date +%s)
  icechunk_check_written "$ROOT" "$REPO" "$TMPD/icechunk/written" "$TMPD/icechunk/node" \
    "$BUILD_DIR" || { clog "Icechunk reading what the plugin wrote FAILED"; rc=1; }
  clog "Icechunk reading what the plugin wrote: $(($(date +%s) - T_WRITTEN))s"
  TESTS+=("$REPO/autotest/test_icechunk_interop.py")
  # The Icechunk rows of `make bench` once, on data the real Icechunk writes here (issue 29, "Fast"):
  # open + full read of a 256-chunk array through the 50 ms latency proxy, repository against plain
  # store (sequential round trips), and the virtual array against GDAL's netCDF driver. Printed, not
  # judged: one run on a loaded machine (`make bench` records the medians in bench/RESULTS.md).
  if [ "${INTEROP_ICECHUNK_BENCH:-1}" = 1 ]; then
    T_BENCH=$(date +%s)
    { step icechunk-bench-data in_chroot "$ROOT" node "$TMPD/icechunk/node/write_bench.mjs" \
      "$TMPD/icechunk/bench" "$TMPD/icechunk/fixtures" >&2 &&
      step icechunk-bench "$PY" "$REPO/bench/icechunk_e2e.py" --data "$TMPD/icechunk" \
        --plugin-dir "$BUILD_DIR" --reps 1 --json "$TMPD/icechunk-bench.json" >&2 &&
      "$PY" "$REPO/bench/icechunk_report.py" "$TMPD/icechunk-bench.json" "$TMPD/RESULTS.md" >&2; } ||
      { clog "Icechunk bench FAILED"; rc=1; }
    clog "Icechunk bench: $(($(date +%s) - T_BENCH))s"
  fi
fi
step pytest "$PY" -m pytest -p no:cacheprovider -q -rfEs --basetemp="$TMPD/pytest" \
  --junitxml="$TMPD/interop.xml" "${TESTS[@]}" "$@" || rc=$?
print_step_times
# A skipped Icechunk interop test fails the leg: their fixtures and applications are all set up here
# (QGIS and rioxarray by the apps leg, which .ci/run runs first).
"$PY" "$HERE/compat/summarize.py" --no-skip=test_icechunk_interop. "interop=$TMPD/interop.xml" >&2 || rc=1
exit $rc
