#!/usr/bin/env bash
# Compatibility leg: build the plugin against another Debian's GDAL inside a fresh debootstrap
# chroot, then run ctest and the pytest suite there: Debian 13 (trixie, GDAL 3.10, GCC 14, with the
# zarr-python interop tests) by default, Debian sid (GDAL 3.13, GCC 16) with COMPAT_SUITE=sid.
#
# usage: scripts/compat.sh [--setup-only]
#   --setup-only   debootstrap + apt only, keep the chroot (for reuse by interop.sh / iteration)
# environment:
#   COMPAT_DIR     chroot root (default /tmp/zarr3-$SUITE-$$); must be absent, empty, or a chroot
#                  made by this script
#   COMPAT_KEEP=1  keep the chroot afterwards (unmounted) so a later run with the same COMPAT_DIR
#                  skips debootstrap/apt.  Default: remove it (CI must not cache across runs).
#   COMPAT_MIRROR  Debian mirror (default: the host's configured Debian mirror)
#   COMPAT_SUITE   default trixie; sid for GDAL 3.13 (apt ignores a stale Release Valid-Until)
#   ZARR3_EXPECT_BUILTIN_V3=1  passed to pytest: GDAL's own Zarr v3 writer must be there (sid),
#                  so the two-way tests with GDAL's driver fail instead of skipping
#   COMPAT_JOBS    build/test parallelism (default: nproc)
#   COMPAT_INTEROP=0  do not run the zarr-python interop tests in the chroot (default 1)
#   COMPAT_UNIT=0  build only the plugin, the tool and the pytest helpers, no unit tests
#   COMPAT_UNIT=vsi  also the store suite over GDAL's VSI (zarr3_vsi_store_tests: the unit tests
#                  that depend on GDAL's version), not the core's (no GDAL; the host, ASan and TSan
#                  legs run them)
#   COMPAT_PYTEST_ARGS  extra pytest arguments (e.g. "-k conformance")
#   COMPAT_CMAKE_ARGS   extra cmake configure arguments
#   COMPAT_LOG_DIR      where the step logs are copied at the end (default /tmp/zarr3-compat-logs-$$)
# Needs root (debootstrap, chroot, mount, unshare).  Mounts live in a private mount namespace and
# are removed on exit; the chroot directory is deleted only after checking nothing is mounted in it.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
# shellcheck source=compat/chroot_lib.sh
source "$HERE/compat/chroot_lib.sh"

SUITE=${COMPAT_SUITE:-trixie}
ROOT=${COMPAT_DIR:-/tmp/zarr3-$SUITE-$$}
KEEP=${COMPAT_KEEP:-0}
JOBS=${COMPAT_JOBS:-$(nproc)}
SHARED=$(realpath -m "$REPO/../shared")
BUILD=/build-zarr3 # build dir inside the chroot
MODE=full
case "${1:-}" in
--setup-only) MODE=setup KEEP=1 ;;
"") ;;
*) echo "usage: $0 [--setup-only]" >&2; exit 2 ;;
esac

# ------------------------------------------------------------------ outer: host mount namespace
if [ "${_COMPAT_INNER:-0}" != 1 ]; then
  [ "$(id -u)" = 0 ] || { clog "needs root (debootstrap, chroot, mount)"; exit 2; }
  if ! command -v debootstrap >/dev/null; then
    clog "installing debootstrap on the host"
    apt-get install -y -q debootstrap >/dev/null || { apt-get update -q && apt-get install -y -q debootstrap; }
  fi
  MIRROR=${COMPAT_MIRROR:-$(host_debian_mirror || true)}
  require_mirror "$MIRROR"
  if [ -e "$ROOT" ] && [ ! -e "$ROOT/$COMPAT_MARKER" ] && [ -n "$(ls -A "$ROOT")" ]; then
    clog "$ROOT exists, is not empty and is not a compat chroot; refusing to use it"
    exit 2
  fi
  mkdir -p "$ROOT"
  ROOT=$(realpath "$ROOT")
  touch "$ROOT/$COMPAT_MARKER"
  outer_cleanup() {
    local rc=$?
    local logs=${COMPAT_LOG_DIR:-/tmp/zarr3-compat-logs-$$}
    if ls "$ROOT"/tmp/*.log >/dev/null 2>&1; then
      mkdir -p "$logs" && cp "$ROOT"/tmp/*.log "$logs"/ && clog "logs copied to $logs"
    fi
    if [ "$KEEP" = 1 ]; then
      chroot_umount_all "$ROOT" || clog "warning: mounts remain below $ROOT"
      clog "kept chroot $ROOT (COMPAT_KEEP=1)"
    else
      chroot_safe_remove "$ROOT" && clog "removed $ROOT" || clog "warning: could not remove $ROOT"
    fi
    exit $rc
  }
  trap outer_cleanup EXIT
  trap 'exit 130' INT TERM
  T0=$(date +%s)
  clog "suite=$SUITE mirror=$MIRROR root=$ROOT repo=$REPO shared=$SHARED jobs=$JOBS"
  rc=0
  _COMPAT_INNER=1 COMPAT_DIR="$ROOT" COMPAT_MIRROR="$MIRROR" COMPAT_KEEP="$KEEP" \
    unshare --mount --propagation private bash "$0" "$@" || rc=$?
  clog "total wall time: $(($(date +%s) - T0))s"
  exit $rc
fi

# ------------------------------------------------------------------ inner: private mount namespace
MIRROR=$COMPAT_MIRROR
trap 'chroot_umount_all "$ROOT" || clog "warning: could not unmount everything below $ROOT"' EXIT

chroot_prepare "$ROOT" "$SUITE" "$MIRROR" || { print_step_times; exit 1; }
clog "package versions in the chroot:"
chroot_versions "$ROOT"
if [ "$MODE" = setup ]; then
  print_step_times
  exit 0
fi

bind_same "$ROOT" "$REPO" ro
bind_shared "$ROOT" "$REPO" "$SHARED"

status=0
built=1
step configure _to_log "$ROOT/tmp/configure.log" in_chroot "$ROOT" cmake -S "$REPO" -B "$BUILD" \
  -DZARR3_WERROR=ON -DZARR3_UNITY_BUILD=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo ${COMPAT_CMAKE_ARGS:-} ||
  { built=0; tail -n 40 "$ROOT/tmp/configure.log" >&2; }
grep -E 'GDAL [0-9]' "$ROOT/tmp/configure.log" >&2 || true
if [ $built = 1 ]; then
  targets=()
  case "${COMPAT_UNIT:-1}" in
  1) ;;
  vsi) targets=(--target gdal_Zarr3 zarr3 zarr3_icechunk_build zarr3_vsi_store_tests) ;;
  *) targets=(--target gdal_Zarr3 zarr3 zarr3_icechunk_build) ;;
  esac
  step build _to_log "$ROOT/tmp/build.log" in_chroot "$ROOT" cmake --build "$BUILD" -j"$JOBS" "${targets[@]}" ||
    { built=0; grep -E -m 40 'error|Error' "$ROOT/tmp/build.log" >&2; tail -n 20 "$ROOT/tmp/build.log" >&2; }
fi

if [ $built = 1 ]; then
  # The plugin must load and be registered next to GDAL 3.10's own Zarr driver.
  CHROOT_ENV=(GDAL_DRIVER_PATH="$BUILD")
  step plugin-check in_chroot "$ROOT" python3 -c '
from osgeo import gdal
print("GDAL", gdal.__version__)
d = gdal.GetDriverByName("Zarr3")
assert d is not None, "Zarr3 driver not registered"
print("Zarr3:", d.GetMetadataItem("DMD_LONGNAME"), "| built-in Zarr:", gdal.GetDriverByName("Zarr") is not None)
' || status=1

  CHROOT_ENV=()
  if [ "${COMPAT_UNIT:-1}" = 1 ] || [ "${COMPAT_UNIT:-1}" = vsi ]; then
    only=()
    [ "${COMPAT_UNIT:-1}" = vsi ] && only=(-L gdal) # the tests of zarr3_vsi_store_tests
    step ctest _to_log "$ROOT/tmp/ctest.log" in_chroot "$ROOT" ctest --test-dir "$BUILD" -j"$JOBS" \
      "${only[@]}" --output-on-failure --output-junit "$BUILD/ctest.xml" || status=1
    tail -n 3 "$ROOT/tmp/ctest.log" >&2
  fi

  CHROOT_ENV=(GDAL_DRIVER_PATH="$BUILD" PYTHONDONTWRITEBYTECODE=1 ZARR3_CONFORMANCE="$REPO/testdata/conformance"
    ZARR3_EXPECT_BUILTIN_V3="${ZARR3_EXPECT_BUILTIN_V3:-0}")
  if [ "${COMPAT_INTEROP:-1}" = 1 ] && [ ! -f "$SHARED/zarr-python-dev/zp.sh" ]; then
    clog "no $SHARED/zarr-python-dev/zp.sh: its interop tests skip (zarr-python's development line is optional here)"
  elif [ "${COMPAT_INTEROP:-1}" = 1 ]; then
    # zarr-python's development line (rectilinear grids, newer types and codecs)
    CHROOT_ENV+=(ZARR3_INTEROP=1
      "ZARR3_ZARR_PYTHON_CMD=sh $SHARED/zarr-python-dev/zp.sh $REPO/scripts/interop/zarr_python_io.py")
  fi
  prc=0
  # shellcheck disable=SC2086
  step pytest _to_log "$ROOT/tmp/pytest.log" in_chroot "$ROOT" bash -c 'cd /tmp && par=$(python3 -c "import xdist" 2>/dev/null && echo "-n 2 --dist loadgroup"); exec python3 -m pytest \
      -p no:cacheprovider -q -rfE $par --junitxml="$0/pytest.xml" "$1/autotest" '"${COMPAT_PYTEST_ARGS:-}" \
    "$BUILD" "$REPO" || prc=$?
  CHROOT_ENV=()
  tail -n 30 "$ROOT/tmp/pytest.log" >&2
  # 5 = no tests collected: not a failure of this leg.
  if [ $prc -ne 0 ] && [ $prc -ne 5 ]; then status=1; fi
else
  status=1
fi

print_step_times
clog "summary (GDAL $(in_chroot "$ROOT" gdal-config --version 2>/dev/null), $SUITE):"
if [ $built = 1 ]; then
  results=("pytest=$ROOT$BUILD/pytest.xml")
  [ "${COMPAT_UNIT:-1}" = 0 ] || results=("ctest=$ROOT$BUILD/ctest.xml" "${results[@]}")
  /usr/bin/python3 "$HERE/compat/summarize.py" "${results[@]}" >&2 || status=1
else
  clog "build FAILED: 0 passed, 1 failed (see build.log / configure.log in the log dir)"
fi
exit $status
