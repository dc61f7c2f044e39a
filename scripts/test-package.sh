#!/usr/bin/env bash
# Package leg: `make package` builds the Debian package of the plugin and the zarr3 tool, then the
# package is installed with apt in a clean Debian 12 (bookworm, minbase) chroot together with gdal-bin,
# and there, without GDAL_DRIVER_PATH, GDAL must list the driver with its version, open the sample store
# through the plugin, read the right values, and the zarr3 tool must run. The chroot is removed at exit.
#   scripts/test-package.sh [DEB]      build dir: build (override with BUILD_DIR); with DEB, that
#                                      package is tested and nothing is built
# Needs root (debootstrap, chroot, mount, unshare).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$(pwd)
# shellcheck source=compat/chroot_lib.sh
source scripts/compat/chroot_lib.sh
COMPAT_LOG_TAG=package
BUILD_DIR=$(realpath -m "${BUILD_DIR:-build}")
ROOT=${PACKAGE_CHROOT:-/tmp/zarr3-pkg-$$}

if [ "${_PKG_INNER:-0}" != 1 ]; then
  [ "$(id -u)" = 0 ] || { clog "needs root (debootstrap, chroot, mount)"; exit 2; }
  command -v debootstrap >/dev/null || apt-get install -y -q debootstrap >/dev/null
  MIRROR=${COMPAT_MIRROR:-$(host_debian_mirror || true)}
  require_mirror "$MIRROR"
  t0=$(date +%s)
  if [ -n "${1:-}" ]; then
    deb=$(realpath "$1")
  else
    make --no-print-directory package BUILD_DIR="$BUILD_DIR" >"/tmp/zarr3-package-$$.log" 2>&1 || {
      tail -40 "/tmp/zarr3-package-$$.log"
      clog "make package failed"
      exit 1
    }
    rm -f "/tmp/zarr3-package-$$.log"
    deb=$(ls -t "$BUILD_DIR"/gdal-zarr3_*.deb | head -1)
    clog "built $deb in $(($(date +%s) - t0))s"
  fi
  dpkg-deb -c "$deb" | awk '{print "  " $6}'
  dpkg-deb -f "$deb" Depends | sed 's/^/  Depends: /'
  [ -e "$ROOT" ] && { clog "$ROOT exists; refusing to use it"; exit 2; }
  mkdir -p "$ROOT"
  touch "$ROOT/$COMPAT_MARKER"
  trap 'chroot_safe_remove "$ROOT" || clog "warning: could not remove $ROOT"' EXIT
  rc=0
  _PKG_INNER=1 PKG_DEB="$deb" COMPAT_MIRROR="$MIRROR" PACKAGE_CHROOT="$ROOT" \
    unshare --mount --propagation private bash "$0" || rc=$?
  clog "total wall time: $(($(date +%s) - t0))s"
  exit $rc
fi

# ------------------------------------------------------------------ inner: private mount namespace
trap 'chroot_umount_all "$ROOT" || clog "warning: could not unmount everything below $ROOT"' EXIT
step debootstrap chroot_bootstrap "$ROOT" bookworm "$COMPAT_MIRROR"
chroot_mount "$ROOT"
sec=${COMPAT_MIRROR%/debian}/debian-security
printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s bookworm-security main\n' \
  "$COMPAT_MIRROR" "$COMPAT_MIRROR" "$sec" >"$ROOT/etc/apt/sources.list"
printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d" && chmod +x "$ROOT/usr/sbin/policy-rc.d"
echo force-unsafe-io >"$ROOT/etc/dpkg/dpkg.cfg.d/zarr3-unsafe-io"
printf 'APT::Install-Recommends "false";\nAcquire::Languages "none";\nAcquire::Retries "3";\n' \
  >"$ROOT/etc/apt/apt.conf.d/99zarr3"
cp "$PKG_DEB" "$ROOT/tmp/"
cp -r "$REPO/data/daily_t2m_2023.zarr" "$ROOT/tmp/sample.zarr"
install_pkg() {
  in_chroot "$ROOT" apt-get -q update >"$ROOT/tmp/apt.log" 2>&1 &&
    in_chroot "$ROOT" apt-get -q -y install gdal-bin "/tmp/$(basename "$PKG_DEB")" >>"$ROOT/tmp/apt.log" 2>&1 ||
    { tail -30 "$ROOT/tmp/apt.log"; return 1; }
}
step apt-install install_pkg

fail=0
check() { # check DESCRIPTION PATTERN CMD...: CMD's output must match PATTERN.
  local what=$1 pattern=$2 out
  shift 2
  if out=$(in_chroot "$ROOT" "$@" 2>&1) && grep -qE -- "$pattern" <<<"$out"; then
    echo "ok: $what"
  else
    echo "FAILED: $what"
    echo "$out" | tail -15
    fail=1
  fi
}
version=$(sed -nE 's/.*"version": "([^"]+)".*/\1/p' "$REPO/plugin.json" | head -1)
check "the package's plugin is in GDAL's plugin folder" 'gdalplugins/gdal_Zarr3.so' \
  dpkg -L gdal-zarr3
check "GDAL lists the driver and its version (no GDAL_DRIVER_PATH)" "ZARR3_VERSION=$version" \
  gdalinfo --format Zarr3
check "gdalinfo opens the sample through the plugin" '^Driver: Zarr3/.*Band 365 ' \
  bash -c 'gdalinfo -nomd /tmp/sample.zarr | tr "\n" " " | sed "s/^/\n/"'
check "the bands are dates" 'Description = time=2023-07-15' \
  gdalinfo -nomd /tmp/sample.zarr
check "band 196 copied to GeoTIFF has the sample's values" \
  'time=2023-07-15 .*Minimum=278\.000, Maximum=295\.000, Mean=287\.445' \
  bash -c 'gdal_translate -q -b 196 /tmp/sample.zarr /tmp/d.tif && gdalinfo -stats /tmp/d.tif | tr "\n" " "'
check "the zarr3 tool runs" 'every stored chunk reads' \
  zarr3 verify /tmp/sample.zarr
print_step_times
[ "$fail" = 0 ] && echo "package: installed and working in a clean Debian 12 chroot"
exit "$fail"
