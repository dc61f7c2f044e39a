#!/usr/bin/env bash
# Installs the Debian packages gdal-zarr3 needs to build, test and run its demo.
# Runs apt only when something is missing (so repeated `make` calls are quick).
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  libgdal-dev gdal-bin python3-gdal python3-numpy python3-pytest
  nlohmann-json3-dev libzstd-dev libblosc-dev libdeflate-dev liblz4-dev zlib1g-dev libflatbuffers-dev flatbuffers-compiler
  libgtest-dev libbenchmark-dev
  nginx-light
)

# shellcheck source=apt_install.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt_install.sh"
apt_install_missing deps "${PACKAGES[@]}"
