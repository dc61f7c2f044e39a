#!/usr/bin/env bash
# Runs a python script with zarr-python's development line (../shared/zarr-python-dev/zp.sh)
# inside a prepared Debian 13 compat chroot, with the repository bound read-write at its own path.
# Used to regenerate data/zp-dev (the zarr-python-written stores the tests read):
#   COMPAT_DIR=/tmp/zarr3-trixie-x scripts/compat.sh --setup-only
#   scripts/zp_dev.sh /tmp/zarr3-trixie-x data/zp-dev/make_stores.py data/zp-dev
# Needs root (chroot, mount, unshare).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
SHARED=$(realpath -m "$REPO/../shared")
# shellcheck source=compat/chroot_lib.sh
source "$HERE/compat/chroot_lib.sh"
COMPAT_LOG_TAG=zp-dev
[ $# -ge 2 ] || { echo "usage: $0 CHROOT SCRIPT.py [ARGS...]" >&2; exit 2; }
ROOT=$(realpath "$1")
shift
chroot_is_ready "$ROOT" || { clog "$ROOT is not a prepared compat chroot"; exit 2; }
if [ "${_ZP_INNER:-0}" != 1 ]; then
  _ZP_INNER=1 unshare --mount --propagation private bash "$0" "$ROOT" "$@"
  exit $?
fi
trap 'chroot_umount_all "$ROOT" || clog "warning: mounts remain below $ROOT"' EXIT
chroot_mount "$ROOT"
bind_same "$ROOT" "$REPO" rw
bind_shared "$ROOT" "$REPO" "$SHARED"
cd "$REPO"
chroot "$ROOT" /usr/bin/env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME=/root PYTHONDONTWRITEBYTECODE=1 \
  sh -c 'cd "$0" && z=$1 && shift && exec sh "$z/zarr-python-dev/zp.sh" "$@"' "$REPO" "$SHARED" "$@"
