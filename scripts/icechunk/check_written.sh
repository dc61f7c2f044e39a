#!/usr/bin/env bash
# Checks that the real Icechunk (npm @earthmover/icechunk, pinned in package-lock.json, run in the
# Debian 13 chroot as for the fixtures) reads repositories written by this library and by the zarr3
# tools (compactions as commits, tags, branches), and that this library reads Icechunk's commits on
# top of them (gtests IcechunkWrite.Interop*, IcechunkWrite.ToolsInteropCheck; fixtures_lib.sh's
# icechunk_check_written, which scripts/interop.sh runs in CI):
#
#   scripts/icechunk/check_written.sh OUTDIR BUILD/zarr3_tests
#
# The zarr3 tool is taken beside zarr3_tests. OUTDIR must be absent or empty; it keeps repo/ and
# report.json (the core writer), tools/ and tools.json (the tools), move/ and move.json (an array
# moved by Icechunk under a session opened before the move).
# environment: INTEROP_CHROOT (a prepared chroot to reuse), COMPAT_MIRROR, as make_fixtures.sh.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=../compat/chroot_lib.sh
source "$HERE/../compat/chroot_lib.sh"
# shellcheck source=fixtures_lib.sh
source "$HERE/fixtures_lib.sh"
COMPAT_LOG_TAG=icechunk-write
SUITE=${COMPAT_SUITE:-trixie}

if [ "${_ICECHUNK_INNER:-0}" != 1 ]; then
  [ $# -eq 2 ] || { echo "usage: $0 OUTDIR ZARR3_TESTS" >&2; exit 2; }
  [ "$(id -u)" = 0 ] || { clog "needs root (chroot, mount)"; exit 2; }
  OUT=$(realpath -m "$1")
  TESTS=$(realpath "$2")
  if [ -e "$OUT" ] && [ -n "$(ls -A "$OUT")" ]; then clog "$OUT is not empty"; exit 2; fi
  mkdir -p "$OUT"
  KEEP=0
  if [ -n "${INTEROP_CHROOT:-}" ]; then
    ROOT=$(realpath "$INTEROP_CHROOT")
    chroot_is_ready "$ROOT" || { clog "$ROOT is not a prepared compat chroot"; exit 2; }
    KEEP=1
  else
    ROOT=/tmp/zarr3-trixie-$$
    mkdir -p "$ROOT"
    touch "$ROOT/$COMPAT_MARKER"
    command -v debootstrap >/dev/null || apt-get install -y -q debootstrap >/dev/null
  fi
  cleanup() {
    local rc=$?
    if [ "$KEEP" = 1 ]; then chroot_umount_all "$ROOT" || true; else chroot_safe_remove "$ROOT" || true; fi
    exit $rc
  }
  trap cleanup EXIT
  trap 'exit 130' INT TERM
  MIRROR=${COMPAT_MIRROR:-$(host_debian_mirror || true)}
  require_mirror "$MIRROR"
  _ICECHUNK_INNER=1 ROOT="$ROOT" OUT="$OUT" TESTS="$TESTS" COMPAT_MIRROR="$MIRROR" \
    unshare --mount --propagation private bash "$0" "$@"
  exit $?
fi

# ------------------------------------------------------------------ inner: private mount namespace
trap 'chroot_umount_all "$ROOT" || clog "warning: mounts remain below $ROOT"' EXIT
chroot_prepare "$ROOT" "$SUITE" "$COMPAT_MIRROR" || exit 1
bind_same "$ROOT" "$REPO" ro
bind_same "$ROOT" "$OUT" rw
node=$OUT/node
mkdir -p "$node"
step icechunk-apt _to_log "$ROOT/tmp/icechunk-apt.log" in_chroot "$ROOT" apt-get install -y -q nodejs ||
  { tail -n 20 "$ROOT/tmp/icechunk-apt.log" >&2; exit 1; }
cp "$HERE/package.json" "$HERE/package-lock.json" "$HERE"/*.mjs "$node/"
step icechunk-npm-ci _to_log "$OUT/npm.log" npm ci --prefix "$node" --no-audit --no-fund ||
  { cat "$OUT/npm.log" >&2; exit 1; }
T_WRITTEN=$(date +%s)
icechunk_check_written "$ROOT" "$REPO" "$OUT" "$node" "$(dirname "$TESTS")" || exit 1
print_step_times
clog "Icechunk read the repositories in $(($(date +%s) - T_WRITTEN))s; reports: $OUT/report.json, $OUT/tools.json"
