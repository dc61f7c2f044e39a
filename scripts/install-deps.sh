#!/usr/bin/env bash
# Installs the Debian packages gdal-zarr3 needs to build, test and run its demo.
# Runs apt only when something is missing (so repeated `make` calls are quick).
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  libgdal-dev gdal-bin python3-gdal python3-numpy python3-pytest
  nlohmann-json3-dev libzstd-dev libblosc-dev libdeflate-dev zlib1g-dev
  libgtest-dev libbenchmark-dev
  nginx-light
)

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "deps: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "deps: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
# Update the package lists once if they are empty or the install fails for lack of them.
if ! compgen -G "/var/lib/apt/lists/*_Packages" >/dev/null; then
  $SUDO apt-get update -q
fi
if ! $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null; then
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
fi
