#!/usr/bin/env bash
# Installs the Debian packages the application tests need (QGIS python bindings, rasterio).
# Runs apt only when something is missing. QGIS runs headless with QT_QPA_PLATFORM=offscreen,
# so no X server (xvfb) is installed.
set -euo pipefail

PACKAGES=(python3-qgis python3-rasterio python3-pytest python3-numpy python3-gdal gdal-bin)

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "apps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "apps: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "apps: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
if ! compgen -G "/var/lib/apt/lists/*_Packages" >/dev/null; then
  $SUDO apt-get update -q
fi
if ! $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null; then
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
fi
