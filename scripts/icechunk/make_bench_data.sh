#!/usr/bin/env bash
# Data for the Icechunk rows of `make bench` (bench/icechunk_e2e.py), written by the real Icechunk
# (npm @earthmover/icechunk, pinned in package-lock.json) in a Debian 13 chroot:
#
#   scripts/icechunk/make_bench_data.sh OUTDIR
#   BENCH_ICECHUNK_DATA=OUTDIR scripts/bench.sh --icechunk-only
#
# OUTDIR must be absent or empty; it is kept (the virtual references hold its absolute path, so it
# cannot be moved). It receives OUTDIR/fixtures (make_netcdf.py + write_fixtures.mjs: the interop
# fixtures, among them the virtual one: 3 monthly NetCDF-4 files and one virtual rectilinear array),
# OUTDIR/bench (write_bench.mjs: a 256-chunk repository, the same array as a plain Zarr store, the
# monthly files as s3:// virtual references) and OUTDIR/node (the npm package).
# environment:
#   BENCH_TRIXIE_CHROOT  a Debian 13 chroot to use (any with apt-get: a compat chroot from
#                        `COMPAT_DIR=... scripts/compat.sh --setup-only`, or a bare debootstrap);
#                        nodejs, python3-h5py and python3-netcdf4 are installed into it.
#                        Default: a fresh minimal one in /tmp/zarr3-trixie-$$, removed afterwards
#   COMPAT_MIRROR        Debian mirror for a fresh chroot (default: the host's)
# Needs root (chroot, mount, unshare) and host node >= 18 with npm.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=../compat/chroot_lib.sh
source "$HERE/../compat/chroot_lib.sh"
# shellcheck source=fixtures_lib.sh
source "$HERE/fixtures_lib.sh"
COMPAT_LOG_TAG=icechunk-bench

if [ "${_ICEBENCH_INNER:-0}" != 1 ]; then
  [ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
  [ "$(id -u)" = 0 ] || { clog "needs root (chroot, mount)"; exit 2; }
  OUT=$(realpath -m "$1")
  if [ -e "$OUT" ] && [ -n "$(ls -A "$OUT")" ]; then clog "$OUT is not empty"; exit 2; fi
  mkdir -p "$OUT"
  MIRROR=${COMPAT_MIRROR:-$(host_debian_mirror || true)}
  # shellcheck disable=SC2034 # read by chroot_release
  KEEP=0
  [ -n "${BENCH_TRIXIE_CHROOT:-}" ] || require_mirror "$MIRROR"
  chroot_pick_root "${BENCH_TRIXIE_CHROOT:-}"
  if [ -n "${BENCH_TRIXIE_CHROOT:-}" ]; then
    [ -x "$ROOT/usr/bin/apt-get" ] || { clog "$ROOT has no apt-get (not a Debian chroot)"; exit 2; }
  else
    step debootstrap chroot_bootstrap "$ROOT" trixie "$MIRROR" || exit 1
  fi
  case "$(cat "$ROOT/etc/debian_version" 2>/dev/null)" in
    13* | trixie*) ;;
    *) clog "$ROOT is not Debian 13 ($(cat "$ROOT/etc/debian_version" 2>/dev/null || echo ?))"; exit 2 ;;
  esac
  chroot_outer_traps
  _ICEBENCH_INNER=1 ROOT="$ROOT" OUT="$OUT" unshare --mount --propagation private bash "$0" "$@"
  exit $?
fi

# ------------------------------------------------------------------ inner: private mount namespace
chroot_inner_trap
chroot_mount "$ROOT"
bind_same "$ROOT" "$REPO" ro
bind_same "$ROOT" "$OUT" rw
if ! in_chroot "$ROOT" dpkg -s "${ICECHUNK_CHROOT_PACKAGES[@]}" >/dev/null 2>&1; then
  step apt-update _to_log "$OUT/apt-update.log" in_chroot "$ROOT" apt-get -q update ||
    { tail -n 20 "$OUT/apt-update.log" >&2; exit 1; }
fi
icechunk_fixtures "$ROOT" "$REPO" "$OUT"
step icechunk-bench in_chroot "$ROOT" node "$OUT/node/write_bench.mjs" "$OUT/bench" "$OUT/fixtures" >&2
print_step_times
clog "bench data: BENCH_ICECHUNK_DATA=$OUT"
