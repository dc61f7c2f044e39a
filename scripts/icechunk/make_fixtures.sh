#!/usr/bin/env bash
# Write the Icechunk interop fixtures (see fixtures_lib.sh) into OUTDIR without running the rest of
# the interop leg, e.g. to develop the Icechunk reader against them:
#
#   scripts/icechunk/make_fixtures.sh OUTDIR
#   ZARR3_ICECHUNK_FIXTURES=OUTDIR/fixtures /usr/bin/python3 -m pytest autotest/test_icechunk_interop.py
#
# OUTDIR must be absent or empty; it is kept (the virtual references hold its absolute path, so it
# cannot be moved afterwards).  environment:
#   INTEROP_CHROOT  a prepared chroot to reuse (COMPAT_DIR=... scripts/compat.sh --setup-only);
#                   default: a fresh one in /tmp/zarr3-trixie-$$, removed afterwards
#   COMPAT_MIRROR   Debian mirror for a fresh chroot (default: the host's)
# Needs root (chroot, mount, unshare) and host node >= 18 with npm.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=../compat/chroot_lib.sh
source "$HERE/../compat/chroot_lib.sh"
# shellcheck source=fixtures_lib.sh
source "$HERE/fixtures_lib.sh"
COMPAT_LOG_TAG=icechunk
SUITE=${COMPAT_SUITE:-trixie}

if [ "${_ICECHUNK_INNER:-0}" != 1 ]; then
  [ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
  [ "$(id -u)" = 0 ] || { clog "needs root (chroot, mount)"; exit 2; }
  OUT=$(realpath -m "$1")
  if [ -e "$OUT" ] && [ -n "$(ls -A "$OUT")" ]; then clog "$OUT is not empty"; exit 2; fi
  mkdir -p "$OUT"
  # shellcheck disable=SC2034 # read by chroot_release
  KEEP=0
  chroot_pick_prepared "${INTEROP_CHROOT:-}"
  chroot_outer_traps
  chroot_mirror
  _ICECHUNK_INNER=1 ROOT="$ROOT" OUT="$OUT" COMPAT_MIRROR="$MIRROR" \
    unshare --mount --propagation private bash "$0" "$@"
  exit $?
fi

# ------------------------------------------------------------------ inner: private mount namespace
chroot_inner_trap
chroot_prepare "$ROOT" "$SUITE" "$COMPAT_MIRROR" || exit 1
bind_same "$ROOT" "$REPO" ro
bind_same "$ROOT" "$OUT" rw
icechunk_fixtures "$ROOT" "$REPO" "$OUT"
print_step_times
clog "fixtures: ZARR3_ICECHUNK_FIXTURES=$OUT/fixtures"
