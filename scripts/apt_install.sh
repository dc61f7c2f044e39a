#!/usr/bin/env bash
# apt_install_missing TAG PACKAGE...: installs the Debian packages that are not installed yet
# (apt runs only when something is missing, so repeated `make` calls are quick).
apt_install_missing() {
  local tag=$1
  shift
  local PACKAGES=("$@")
  local missing=() p status
  for p in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    if [[ "$status" != "install ok installed" ]]; then
      missing+=("$p")
    fi
  done

  if [[ ${#missing[@]} -eq 0 ]]; then
    echo "$tag: all ${#PACKAGES[@]} packages present"
    return 0
  fi

  echo "$tag: installing ${missing[*]}"
  local SUDO=""
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null; then SUDO="sudo"; else
      echo "$tag: need root (or sudo) to install: ${missing[*]}" >&2
      return 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  # Another apt (unattended-upgrades, a second terminal) holding the lock: wait for it, up to
  # 10 minutes, instead of failing at once with "Could not get lock".
  local lock=(-o DPkg::Lock::Timeout=600)
  # Update the package lists once if they are empty or the install fails for lack of them.
  if ! compgen -G "/var/lib/apt/lists/*_Packages" >/dev/null; then
    $SUDO apt-get "${lock[@]}" update -q
  fi
  if ! $SUDO apt-get "${lock[@]}" install -y -q --no-install-recommends "${missing[@]}" </dev/null; then
    $SUDO apt-get "${lock[@]}" update -q
    $SUDO apt-get "${lock[@]}" install -y -q --no-install-recommends "${missing[@]}" </dev/null
  fi
}
