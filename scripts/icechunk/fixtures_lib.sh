# shellcheck shell=bash
# Icechunk interop fixtures (issue 29): repositories written by the real Icechunk (npm
# @earthmover/icechunk 2.2.x, pinned in scripts/icechunk/package-lock.json) inside the Debian 13
# chroot, whose glibc (>= 2.38) the binding's Linux binary needs.  Sourced by scripts/interop.sh after
# scripts/compat/chroot_lib.sh; defines functions only.
#
# icechunk_fixtures ROOT REPO OUT
#   ROOT  a prepared, mounted chroot (chroot_prepare) where OUT is bind-mounted at the same path
#   REPO  this repository (readable in the chroot at the same path)
#   OUT   an empty folder: receives OUT/node (the npm package, installed on the host by `npm ci`:
#         the binary is only downloaded there, never run) and OUT/fixtures (make_netcdf.py then
#         write_fixtures.mjs, both run in the chroot; OUT/fixtures/fixtures.json lists them).
# Nothing is cached across runs: the caller deletes OUT.

ICECHUNK_CHROOT_PACKAGES=(nodejs python3-h5py python3-netcdf4)

icechunk_fixtures() {
  local root=$1 repo=$2 out=$3
  local src=$repo/scripts/icechunk node=$out/node fx=$out/fixtures
  mkdir -p "$node" "$fx"
  step icechunk-apt _to_log "$root/tmp/icechunk-apt.log" \
    in_chroot "$root" apt-get install -y -q "${ICECHUNK_CHROOT_PACKAGES[@]}" ||
    { tail -n 20 "$root/tmp/icechunk-apt.log" >&2; return 1; }
  cp "$src/package.json" "$src/package-lock.json" "$src"/*.mjs "$node/"
  step icechunk-npm-ci _to_log "$out/npm.log" npm ci --prefix "$node" --no-audit --no-fund ||
    { cat "$out/npm.log" >&2; return 1; }
  step icechunk-netcdf in_chroot "$root" python3 "$src/make_netcdf.py" "$fx" >&2 || return 1
  step icechunk-write in_chroot "$root" node "$node/write_fixtures.mjs" "$fx" >&2 || return 1
}
