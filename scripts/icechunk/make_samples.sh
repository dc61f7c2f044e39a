#!/usr/bin/env bash
# Write the Icechunk sample repositories of data/ with the real Icechunk (npm @earthmover/icechunk,
# pinned in scripts/icechunk/package-lock.json) in a Debian 13 chroot (the binding needs glibc >= 2.38):
#
#   data/t2m_2023q1.icechunk   the first 90 days of data/daily_t2m_2023.zarr's /t2m: a rectilinear time
#                              axis of calendar months [31,28,31] written as three commits (January
#                              created, February appended, March appended), tag `january` at the first
#                              commit, branch `qc` with one correction commit.
#   data/archive/t2m_2023-0{1,2,3}.nc   the same 90 days as three monthly NetCDF-4 files (zlib+shuffle)
#   data/archive.icechunk      one virtual rectilinear array /t2m (time chunks [31,28,31]) whose chunks
#                              are references into file:///tmp/gdal-zarr3-archive/t2m_2023-0M.nc, plus
#                              native coordinates (copy data/archive/*.nc there before reading),
#                              written on the host by `zarr3 virtualize` (the tool beside the plugin;
#                              --no-checksum: a git checkout does not keep the files' times).
#
# usage: sudo scripts/icechunk/make_samples.sh        (replaces those paths in data/)
# Steps: the source values are read on the host (GDAL + this plugin: GDAL_DRIVER_PATH, default
# build/); make_sample_netcdf.py (netCDF4) and write_samples.mjs (Icechunk: t2m_2023q1) run in the
# chroot; `zarr3 virtualize` writes archive.icechunk on the host (the same command README's worked
# example runs); check_samples.py checks, on the host, every commit and the virtual array bit-exact
# against the source through the plugin. The real Icechunk reads the committed archive in the
# interop leg (scripts/icechunk/virtual_repo.sh, test_icechunk_interop.py).  environment:
#   SAMPLES_CHROOT  a chroot to reuse (kept; made by an earlier run with SAMPLES_KEEP_CHROOT=1);
#                   default: a fresh one in /tmp/zarr3-trixie-samples-$$, removed afterwards
#   COMPAT_MIRROR   Debian mirror for a fresh chroot (default: the host's)
# Needs root (chroot, mount, unshare), host node >= 18 with npm, /usr/bin/python3 with GDAL.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=../compat/chroot_lib.sh
source "$HERE/../compat/chroot_lib.sh"
# shellcheck source=fixtures_lib.sh
source "$HERE/fixtures_lib.sh"
COMPAT_LOG_TAG=samples
SUITE=${COMPAT_SUITE:-trixie}
# Only what the sample writers need (not the compat leg's build toolchain).
COMPAT_PACKAGES=(python3-numpy "${ICECHUNK_CHROOT_PACKAGES[@]}")

if [ "${_SAMPLES_INNER:-0}" != 1 ]; then
  [ $# -eq 0 ] || { echo "usage: $0   (writes data/t2m_2023q1.icechunk, data/archive*)" >&2; exit 2; }
  [ "$(id -u)" = 0 ] || { clog "needs root (chroot, mount)"; exit 2; }
  export GDAL_DRIVER_PATH=${GDAL_DRIVER_PATH:-$REPO/build}
  [ -f "$GDAL_DRIVER_PATH/gdal_Zarr3.so" ] || { clog "no plugin in $GDAL_DRIVER_PATH (set GDAL_DRIVER_PATH)"; exit 2; }
  [ -x "$GDAL_DRIVER_PATH/zarr3" ] || { clog "no zarr3 tool in $GDAL_DRIVER_PATH (make build)"; exit 2; }
  STAGE=$(mktemp -d /tmp/zarr3-samples-XXXXXX)
  # shellcheck disable=SC2034 # read by chroot_release
  KEEP=0
  chroot_pick_root "${SAMPLES_CHROOT:-}" "/tmp/zarr3-trixie-samples-$$"
  if [ -n "${SAMPLES_CHROOT:-}" ]; then
    [ -e "$ROOT/$COMPAT_MARKER" ] || { clog "$ROOT is not a compat chroot (no marker)"; exit 2; }
  elif [ "${SAMPLES_KEEP_CHROOT:-0}" = 1 ]; then
    # shellcheck disable=SC2034 # read by chroot_release
    KEEP=1
  fi
  remove_stage() { rm -rf "$STAGE"; }
  chroot_outer_traps remove_stage
  chroot_mirror
  step source-values /usr/bin/python3 "$HERE/check_samples.py" source "$REPO/data/daily_t2m_2023.zarr" "$STAGE/src"
  _SAMPLES_INNER=1 ROOT="$ROOT" STAGE="$STAGE" COMPAT_MIRROR="$MIRROR" \
    unshare --mount --propagation private bash "$0" "$@"
  # The virtual archive: zarr3 virtualize (issue 42), its references under the sample's container.
  step virtualize "$GDAL_DRIVER_PATH/zarr3" virtualize "$STAGE/out/archive.icechunk" \
    "$STAGE/out/archive"/t2m_2023-0[123].nc --concat-dim time \
    --container file:///tmp/gdal-zarr3-archive/ --no-checksum \
    --message "virtual /t2m: 3 monthly NetCDF-4 files (zarr3 virtualize)"
  # Into data/: replace the previous samples, then check what is committed there.
  rm -rf "$REPO/data/t2m_2023q1.icechunk" "$REPO/data/archive.icechunk" "$REPO/data/archive"/t2m_2023-0?.nc
  mkdir -p "$REPO/data/archive"
  cp -r "$STAGE/out/t2m_2023q1.icechunk" "$STAGE/out/archive.icechunk" "$REPO/data/"
  cp "$STAGE/out/archive"/t2m_2023-0?.nc "$REPO/data/archive/"
  step check /usr/bin/python3 "$HERE/check_samples.py" check "$REPO/data" "$STAGE/out/samples.json"
  print_step_times
  exit 0
fi

# ------------------------------------------------------------------ inner: private mount namespace
chroot_inner_trap
chroot_prepare "$ROOT" "$SUITE" "$COMPAT_MIRROR" || exit 1
bind_same "$ROOT" "$REPO" ro
bind_same "$ROOT" "$STAGE" rw
mkdir -p "$STAGE/node" "$STAGE/out"
cp "$HERE/package.json" "$HERE/package-lock.json" "$HERE"/*.mjs "$STAGE/node/"
step icechunk-npm-ci _to_log "$STAGE/npm.log" npm ci --prefix "$STAGE/node" --no-audit --no-fund ||
  { cat "$STAGE/npm.log" >&2; exit 1; }
step netcdf in_chroot "$ROOT" python3 "$HERE/make_sample_netcdf.py" "$STAGE/src" "$STAGE/out" >&2 || exit 1
step icechunk-write in_chroot "$ROOT" node "$STAGE/node/write_samples.mjs" "$STAGE/src" "$STAGE/out" >&2 || exit 1
print_step_times
