# shellcheck shell=bash
# Helpers shared by the scripts that work in a Debian chroot (compat.sh, interop.sh, test-package.sh,
# zp_dev.sh, bench.sh, icechunk/make_*.sh): create, mount, enter and safely remove a Debian (trixie)
# chroot.  Source this file; it defines functions only.
#
# Safety model
# - The chroot root always holds a marker file (.zarr3-compat-root); nothing is ever deleted in a
#   directory without it.
# - The callers run their mounting part inside a private mount namespace (unshare -m), so mounts
#   vanish with that process even if it is killed; the EXIT traps unmount anyway.
# - Before deleting a root we list every mount point below it (in the caller's namespace) and refuse
#   to delete while any remains.

COMPAT_MARKER=.zarr3-compat-root
COMPAT_READY=.zarr3-compat-ready

# Packages installed into the chroot (build + test dependencies, GDAL 3.10, zarr-python 3; the
# last line is what ../shared/zarr-python-dev/zp.sh, zarr-python's development line, needs).
COMPAT_PACKAGES=(build-essential cmake pkg-config libgdal-dev gdal-bin python3-gdal python3-numpy
  python3-pytest python3-pytest-xdist nlohmann-json3-dev libzstd-dev libblosc-dev libdeflate-dev liblz4-dev zlib1g-dev libgtest-dev libflatbuffers-dev flatbuffers-compiler
  libhdf5-dev python3-netcdf4 python3-h5py
  python3-zarr nginx-light python3-moto python3-flask-cors
  python3-numcodecs python3-donfig python3-msgspec python3-crc32c python3-packaging)

clog() { printf '[%s] %s\n' "${COMPAT_LOG_TAG:-compat}" "$*" >&2; }

# step NAME CMD...: run CMD, print and record its wall time in STEP_TIMES.
STEP_TIMES=()
step() {
  local name=$1
  shift
  local t0 t1 rc=0
  t0=$(date +%s)
  clog "---- $name"
  "$@" || rc=$?
  t1=$(date +%s)
  STEP_TIMES+=("$(printf '%-22s %5ss%s' "$name" "$((t1 - t0))" "$([ $rc -eq 0 ] || echo "  (exit $rc)")")")
  clog "---- $name: $((t1 - t0))s (exit $rc)"
  return $rc
}

# _to_log LOG CMD...: run CMD with stdout+stderr into LOG.
_to_log() {
  local log=$1
  shift
  "$@" >"$log" 2>&1
}

print_step_times() {
  local s
  clog "step times:"
  for s in "${STEP_TIMES[@]}"; do clog "  $s"; done
}

# The Debian mirror configured on the host's apt (first deb URI ending in /debian). Prints nothing
# and fails when the host has none: the repository names no mirror of its own.
# COMPAT_APT_ETC (default /etc/apt) lets the tests point it at another folder.
host_debian_mirror() {
  local uri etc=${COMPAT_APT_ETC:-/etc/apt}
  uri=$(cat "$etc"/sources.list "$etc"/sources.list.d/*.list "$etc"/sources.list.d/*.sources \
    2>/dev/null | grep -v '^\s*#' |
    grep -oE '(https?)://[^ ]+/debian/?( |$)' | head -n1 | tr -d ' ')
  uri=${uri%/}
  [ -n "$uri" ] && echo "$uri"
}

# require_mirror MIRROR: stop with a clear message when no Debian mirror is known.
require_mirror() {
  [ -n "$1" ] && return 0
  clog "no Debian mirror: the host's apt configuration (/etc/apt/sources.list, /etc/apt/sources.list.d/)"
  clog "names no deb URI ending in /debian; configure one there or set COMPAT_MIRROR"
  exit 2
}

# Mount points at or below $1 in this namespace, deepest first.
mounts_below() {
  local root
  root=$(realpath -m "$1")
  awk -v r="$root" '{ p = $5; gsub(/\\040/, " ", p); if (p == r || index(p, r "/") == 1) print p }' \
    /proc/self/mountinfo | sort -r
}

# Unmount everything at or below the chroot root $1 (recursive, lazy as a last resort).
chroot_umount_all() {
  local root=$1 m tries
  for tries in 1 2 3; do
    mapfile -t _ms < <(mounts_below "$root")
    [ ${#_ms[@]} -eq 0 ] && return 0
    for m in "${_ms[@]}"; do
      umount -R "$m" 2>/dev/null || { [ "$tries" -eq 3 ] && umount -R -l "$m" 2>/dev/null; } || true
    done
    sleep 0.2
  done
  [ -z "$(mounts_below "$root")" ]
}

# Delete a chroot root, only if it carries the marker and nothing is mounted below it.
chroot_safe_remove() {
  local root=$1
  [ -n "$root" ] && [ -d "$root" ] || return 0
  root=$(realpath "$root")
  case "$root" in / | /tmp | /work | /root | /home | /usr | /var | /etc) clog "refusing to remove $root"; return 1 ;; esac
  if [ ! -e "$root/$COMPAT_MARKER" ]; then
    clog "not removing $root: no $COMPAT_MARKER marker"
    return 1
  fi
  chroot_umount_all "$root" || true
  if [ -n "$(mounts_below "$root")" ]; then
    clog "NOT removing $root: still mounted:"
    mounts_below "$root" >&2
    return 1
  fi
  rm -rf --one-file-system "$root"
}

# bind_same ROOT DIR [ro]: bind-mount host DIR at the same path inside ROOT.
bind_same() {
  local root=$1 dir=$2 mode=${3:-rw}
  mkdir -p "$root$dir"
  mount --bind "$dir" "$root$dir"
  if [ "$mode" = ro ]; then mount -o remount,bind,ro "$root$dir"; fi
}

# bind_shared ROOT REPO SHARED: the corpus beside the repo, at its real path and, when
# ../shared is reached through a symlink, at that path too (the link is not in the chroot).
bind_shared() {
  local root=$1 repo=$2 shared=$3 logical
  [ -d "$shared" ] || return 0
  bind_same "$root" "$shared" ro
  logical="$(cd "$repo/.." && pwd)/shared"
  if [ "$logical" != "$shared" ]; then
    mkdir -p "$root$logical"
    mount --bind "$shared" "$root$logical"
    mount -o remount,bind,ro "$root$logical"
  fi
}

# chroot_mount ROOT: /proc, /dev (rbind, slave), /dev/shm from the host; /tmp is the chroot's own.
chroot_mount() {
  local root=$1
  mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
  if ! mountpoint -q "$root/dev"; then
    mount --rbind /dev "$root/dev"
    mount --make-rslave "$root/dev"
  fi
  cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
}

# in_chroot ROOT CMD...: run CMD in the chroot with a clean environment (extra VAR=val via CHROOT_ENV).
in_chroot() {
  local root=$1
  shift
  chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive TERM=dumb \
    "${CHROOT_ENV[@]}" "$@"
}

# chroot_bootstrap ROOT SUITE MIRROR: debootstrap --variant=minbase.
chroot_bootstrap() {
  local root=$1 suite=$2 mirror=$3
  local kr=/usr/share/keyrings/debian-archive-keyring.gpg
  debootstrap --variant=minbase --include=ca-certificates ${kr:+--keyring=$kr} \
    "$suite" "$root" "$mirror" >"$root/.debootstrap-out.log" 2>&1 || {
    tail -n 40 "$root/.debootstrap-out.log" >&2
    return 1
  }
  rm -f "$root/.debootstrap-out.log"
}

# chroot_apt ROOT SUITE MIRROR: configure apt/dpkg for speed and install COMPAT_PACKAGES.
chroot_apt() {
  local root=$1 suite=$2 mirror=$3
  local sec=${mirror%/debian}/debian-security
  if [ "$suite" = sid ] || [ "$suite" = unstable ]; then
    # sid has no -updates/-security suites, and the mirror's Release file can be past Valid-Until.
    echo "deb $mirror $suite main" >"$root/etc/apt/sources.list"
    echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/98zarr3-sid"
  else
    cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb $sec $suite-security main
EOF
  fi
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod +x "$root/usr/sbin/policy-rc.d"
  echo force-unsafe-io >"$root/etc/dpkg/dpkg.cfg.d/zarr3-unsafe-io"
  cat >"$root/etc/dpkg/dpkg.cfg.d/zarr3-nodoc" <<'EOF'
path-exclude /usr/share/doc/*
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
EOF
  cat >"$root/etc/apt/apt.conf.d/99zarr3" <<'EOF'
Acquire::Retries "3";
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
EOF
  in_chroot "$root" apt-get -q -o Acquire::Check-Valid-Until=false update >"$root/tmp/apt-update.log" 2>&1 || {
    tail -n 30 "$root/tmp/apt-update.log" >&2
    return 1
  }
  in_chroot "$root" apt-get -q -y install "${COMPAT_PACKAGES[@]}" >"$root/tmp/apt-install.log" 2>&1 || {
    tail -n 40 "$root/tmp/apt-install.log" >&2
    return 1
  }
  in_chroot "$root" apt-get clean
  printf '%s\n' "${COMPAT_PACKAGES[@]}" >"$root/$COMPAT_READY"
}

# chroot_pick_root REUSE [FRESH]: sets ROOT for a script that reuses a prepared chroot or makes a
# fresh one. REUSE non-empty: that chroot (resolved; the caller checks what it must hold), KEEP=1 (it
# is only unmounted afterwards). Else FRESH (default /tmp/zarr3-trixie-$$), created with the marker
# file, debootstrap installed on the host; KEEP stays the caller's (0: removed afterwards).
chroot_pick_root() {
  if [ -n "${1:-}" ]; then
    ROOT=$(realpath "$1")
    KEEP=1
  else
    ROOT=${2:-/tmp/zarr3-trixie-$$}
    mkdir -p "$ROOT"
    touch "$ROOT/$COMPAT_MARKER"
    command -v debootstrap >/dev/null || apt-get install -y -q debootstrap >/dev/null
  fi
}

# chroot_pick_prepared REUSE: chroot_pick_root; a reused chroot must be a prepared compat chroot.
chroot_pick_prepared() {
  chroot_pick_root "${1:-}"
  if [ -n "${1:-}" ] && ! chroot_is_ready "$ROOT"; then
    clog "$ROOT is not a prepared compat chroot"
    exit 2
  fi
}

# chroot_mirror: sets MIRROR to COMPAT_MIRROR or the host's Debian mirror; stops without one.
chroot_mirror() {
  MIRROR=${COMPAT_MIRROR:-$(host_debian_mirror || true)}
  require_mirror "$MIRROR"
}

# chroot_release: the outer EXIT clean-up of ROOT: unmount a kept chroot, remove a fresh one.
chroot_release() {
  if [ "${KEEP:-0}" = 1 ]; then chroot_umount_all "$ROOT" || true; else chroot_safe_remove "$ROOT" || true; fi
}

# chroot_outer_traps [FN]: the outer part's traps: on exit chroot_release, then the caller's own
# clean-up function FN if named, keeping the exit status; INT and TERM exit with 130 (through it).
chroot_outer_traps() {
  _CHROOT_OUTER_FN=${1:-}
  trap _chroot_outer_exit EXIT
  trap 'exit 130' INT TERM
}
_chroot_outer_exit() {
  local rc=$?
  chroot_release
  if [ -n "${_CHROOT_OUTER_FN:-}" ]; then "$_CHROOT_OUTER_FN" || true; fi
  exit $rc
}

# chroot_inner_trap: the EXIT trap of the part inside the private mount namespace.
chroot_inner_trap() {
  trap 'chroot_umount_all "$ROOT" || clog "warning: mounts remain below $ROOT"' EXIT
}

# chroot_is_ready ROOT: packages installed with the current package list.
chroot_is_ready() {
  [ -e "$1/$COMPAT_READY" ] && [ "$(cat "$1/$COMPAT_READY")" = "$(printf '%s\n' "${COMPAT_PACKAGES[@]}")" ]
}

# chroot_prepare ROOT SUITE MIRROR: bootstrap + apt unless already prepared (needs chroot_mount
# after bootstrap; call inside the private mount namespace).
chroot_prepare() {
  local root=$1 suite=$2 mirror=$3
  if chroot_is_ready "$root"; then
    clog "reusing prepared chroot $root"
    chroot_mount "$root"
    return 0
  fi
  if [ ! -x "$root/usr/bin/apt-get" ]; then
    step debootstrap chroot_bootstrap "$root" "$suite" "$mirror" || return 1
  fi
  chroot_mount "$root"
  step apt-install chroot_apt "$root" "$suite" "$mirror" || return 1
}

# Versions of the interesting packages inside the chroot.
chroot_versions() {
  local root=$1
  in_chroot "$root" dpkg-query -W -f '  ${Package} ${Version}\n' gdal-bin libgdal-dev python3-zarr \
    python3-numcodecs python3-numpy cmake g++ python3-pytest nodejs >&2 2>/dev/null || true
}
