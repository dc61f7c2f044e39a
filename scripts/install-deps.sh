#!/usr/bin/env bash
# Installs the Debian packages gdal-zarr3 needs to build, test and run its demo
# (usage: install-deps.sh [--demo | --no-azurite | --azurite-only]; --demo: only what `make demo`
# needs; `make test` installs the packages first, then Azurite (npm, network bound) while it builds).
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
MODE=${1:-}
[ "$MODE" = --demo ] || PACKAGES+=("${TEST_PACKAGES[@]}")

# shellcheck source=apt_install.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt_install.sh"
[ "$MODE" = --azurite-only ] || apt_install_missing deps "${PACKAGES[@]}"

# Azurite (npm `azurite`, the Azure Blob emulator) for the Azure cases of
# autotest/test_icechunk_object_storage.py: into $ZARR3_BUILD_DIR/azurite (default build/azurite),
# where autotest/azurite_fixture.py finds it. Installed when missing (a fresh clone: every CI run;
# about 45 s); without npm it is left out and those tests skip, saying why.
AZURITE_VERSION=3.35.0
if [ "$MODE" != --demo ] && [ "$MODE" != --no-azurite ]; then
  AZURITE_DIR=${ZARR3_BUILD_DIR:-$(dirname "${BASH_SOURCE[0]}")/../build}/azurite
  if [ -x "$AZURITE_DIR/node_modules/.bin/azurite-blob" ]; then
    echo "deps: azurite present ($AZURITE_DIR)"
  elif command -v npm >/dev/null; then
    echo "deps: installing azurite $AZURITE_VERSION into $AZURITE_DIR"
    mkdir -p "$AZURITE_DIR"
    npm install --prefix "$AZURITE_DIR" --no-audit --no-fund --loglevel=error "azurite@$AZURITE_VERSION" ||
      echo "deps: npm install of azurite failed: the Azure commit tests will skip" >&2
  else
    echo "deps: no npm: azurite not installed, the Azure commit tests will skip" >&2
  fi
fi
