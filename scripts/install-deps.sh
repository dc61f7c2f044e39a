#!/usr/bin/env bash
# Installs the Debian packages gdal-zarr3 needs to build, test and run its demo
# (usage: install-deps.sh [--demo]; --demo: only what `make demo` needs).
# Runs apt only when something is missing (so repeated `make` calls are quick).
set -euo pipefail

# What building the plugin and the tool, and running the demo, need (`make demo`: --demo) ...
PACKAGES=(
  build-essential cmake
  libgdal-dev gdal-bin python3-gdal python3-numpy
  nlohmann-json3-dev libzstd-dev libblosc-dev libdeflate-dev liblz4-dev zlib1g-dev libflatbuffers-dev flatbuffers-compiler
  libhdf5-dev # the zarr3 tool's virtualize verb (NetCDF-4 chunk index); not the plugin
)
# ... and what the test suites add (`make test`).
TEST_PACKAGES=(pkg-config python3-pytest python3-pytest-xdist libgtest-dev libbenchmark-dev nginx-light
  python3-netcdf4 python3-h5py) # NetCDF-4 / HDF5 files for autotest/test_cli_virtualize.py
[ "${1:-}" = --demo ] || PACKAGES+=("${TEST_PACKAGES[@]}")

# shellcheck source=apt_install.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt_install.sh"
apt_install_missing deps "${PACKAGES[@]}"
