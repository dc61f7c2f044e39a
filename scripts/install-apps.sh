#!/usr/bin/env bash
# Installs the Debian packages the application tests need (QGIS python bindings, rasterio,
# rioxarray, dask and dask.distributed). python3-cftime: Debian 12's xarray decodes a CF time axis
# ('days since ...') only with it (it is only a Recommends of python3-xarray); without it rioxarray
# cannot open a time series.
# Runs apt only when something is missing. QGIS runs headless with QT_QPA_PLATFORM=offscreen,
# so no X server (xvfb) is installed.
set -euo pipefail

PACKAGES=(python3-qgis python3-rasterio python3-rioxarray python3-cftime python3-dask python3-distributed python3-pytest
  python3-numpy python3-gdal gdal-bin)

# shellcheck source=apt_install.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt_install.sh"
apt_install_missing apps "${PACKAGES[@]}"
