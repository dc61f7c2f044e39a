#!/usr/bin/env bash
# Times a newcomer's first `make demo` on a fresh Debian 12: debootstraps a bookworm (minbase) chroot,
# installs `make` (the README's command needs it; not timed), copies a clean clone of this repository
# (HEAD, committed files only) into it and runs `make demo` as root there, with each output line
# time-stamped. Prints the split: apt install (scripts/install-deps.sh), configure (cmake), compile,
# demo run, and the machine load. The chroot is removed at exit (DEMO_KEEP=1 keeps it, unmounted).
#   scripts/time-demo.sh          needs root (debootstrap, chroot, mount, unshare)
# DEMO_CHROOT: chroot root (default /tmp/zarr3-demo-$$; must not exist). DEMO_LOG: the time-stamped log.
# DEMO_REV: the commit to time (default HEAD), e.g. an older one for a before/after comparison.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$(pwd)
# shellcheck source=compat/chroot_lib.sh
source scripts/compat/chroot_lib.sh
COMPAT_LOG_TAG=time-demo
ROOT=${DEMO_CHROOT:-/tmp/zarr3-demo-$$}
LOG=${DEMO_LOG:-/tmp/zarr3-demo-time-$$.log}

if [ "${_DEMO_INNER:-0}" != 1 ]; then
  [ "$(id -u)" = 0 ] || { clog "needs root (debootstrap, chroot, mount)"; exit 2; }
  command -v debootstrap >/dev/null || apt-get install -y -q debootstrap >/dev/null
  MIRROR=${COMPAT_MIRROR:-$(host_debian_mirror || true)}
  require_mirror "$MIRROR"
  [ -e "$ROOT" ] && { clog "$ROOT exists; refusing to use it"; exit 2; }
  mkdir -p "$ROOT"
  touch "$ROOT/$COMPAT_MARKER"
  if [ "${DEMO_KEEP:-0}" = 1 ]; then
    trap 'clog "kept $ROOT (remove: source scripts/compat/chroot_lib.sh && chroot_safe_remove $ROOT)"' EXIT
  else
    trap 'chroot_safe_remove "$ROOT" || clog "warning: could not remove $ROOT"' EXIT
  fi
  rc=0
  _DEMO_INNER=1 COMPAT_MIRROR="$MIRROR" DEMO_CHROOT="$ROOT" DEMO_LOG="$LOG" \
    unshare --mount --propagation private bash "$0" || rc=$?
  exit $rc
fi

# ------------------------------------------------------------------ inner: private mount namespace
trap 'chroot_umount_all "$ROOT" || clog "warning: could not unmount everything below $ROOT"' EXIT
step debootstrap chroot_bootstrap "$ROOT" bookworm "$COMPAT_MIRROR"
chroot_mount "$ROOT"
# A plain installation's apt configuration: the three usual suites, nothing tuned for speed.
sec=${COMPAT_MIRROR%/debian}/debian-security
printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s bookworm-security main\n' \
  "$COMPAT_MIRROR" "$COMPAT_MIRROR" "$sec" >"$ROOT/etc/apt/sources.list"
printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d" && chmod +x "$ROOT/usr/sbin/policy-rc.d"
prep() {
  in_chroot "$ROOT" apt-get -q update >"$ROOT/tmp/apt-prep.log" 2>&1 &&
    in_chroot "$ROOT" apt-get -q -y install make >>"$ROOT/tmp/apt-prep.log" 2>&1 ||
    { tail -30 "$ROOT/tmp/apt-prep.log"; return 1; }
}
step "apt update + make" prep
git clone -q --no-hardlinks "$REPO" "$ROOT/root/gdal-zarr3"
git -C "$ROOT/root/gdal-zarr3" checkout -q "${DEMO_REV:-HEAD}"
clog "clean clone of $(git -C "$ROOT/root/gdal-zarr3" rev-parse --short HEAD) in /root/gdal-zarr3"

# Each output line prefixed with the seconds since the start.
t0=$EPOCHREALTIME
stamp() { while IFS= read -r l; do printf '%7.1f %s\n' "$(awk -v a="$EPOCHREALTIME" -v b="$t0" 'BEGIN { print a - b }')" "$l"; done; }
clog "load before: $(uptime)"
set +e
# `times` prints the CPU time (user, system) of everything make ran: less sensitive to the
# machine's load than the wall time.
in_chroot "$ROOT" bash -c 'cd /root/gdal-zarr3 && make demo; rc=$?; echo "CPU time of make demo (user, system):"; times >/tmp/times.txt; tail -n 1 /tmp/times.txt; echo "make demo exit $rc"' 2>&1 | stamp >"$LOG"
set -e
rc=$(sed -nE 's/.*make demo exit ([0-9]+)$/\1/p' "$LOG" | tail -1)
t_end=$(tail -1 "$LOG" | awk '{print $1}')
clog "load after: $(uptime)"
# Phase boundaries: the first line of cmake's configure, of the build, of the demo.
at() { awk -v p="$1" 'index($0, p) { print $1; exit }' "$LOG"; }
t_cfg=$(at 'cmake -S . -B')
t_build=$(at 'cmake --build')
t_demo=$(at '==> ')
sub() { echo "${1:-?} ${2:-?}" | awk '{ if ($1 == "?" || $2 == "?") print "?"; else printf "%.0f", $1 - $2 }'; }
clog "make demo exit $rc, wall ${t_end}s: apt install $(sub "$t_cfg" 0)s, configure $(sub "$t_build" "$t_cfg")s," \
  "compile $(sub "$t_demo" "$t_build")s, demo run $(sub "$t_end" "$t_demo")s (log: $LOG)"
clog "$(grep -A1 'CPU time of make demo' "$LOG" | tail -n 1 | cut -c9-) CPU (user, system) on $(nproc) cores"
print_step_times
exit "$rc"
