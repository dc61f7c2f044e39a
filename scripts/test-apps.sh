#!/usr/bin/env bash
# Application leg: QGIS (headless), rasterio, rioxarray and dask.distributed open Zarr3 stores
# and Icechunk repositories through the plugin.
#   bash scripts/test-apps.sh            build dir: build (override with ZARR3_BUILD_DIR)
# Installs the missing Debian packages (scripts/install-deps.sh, scripts/install-apps.sh),
# builds the plugin and the zarr3 tool (the Icechunk tests take snapshot ids from `zarr3 log`),
# runs autotest/test_qgis.py, test_rasterio.py, test_rioxarray.py and test_dask.py (a two-process
# LocalCluster on 127.0.0.1), and prints a SUMMARY line. Fails when a test fails or is skipped (the packages are
# installed here, so a skip means an import is broken).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR=$(realpath -m "${ZARR3_BUILD_DIR:-build}")
PYTHON=${PYTHON:-/usr/bin/python3}

t0=$(date +%s)
bash scripts/install-deps.sh
bash scripts/install-apps.sh
t1=$(date +%s)
echo "apps: packages ready in $((t1 - t0))s"

# Only the plugin and the tool (incremental when `make build` already ran in the same dir).
blog=$(mktemp)
{ cmake -S . -B "$BUILD_DIR" -DZARR3_WERROR=ON && cmake --build "$BUILD_DIR" -j"${JOBS:-2}" --target gdal_Zarr3 zarr3; } \
  >"$blog" 2>&1 || {
  cat "$blog" >&2
  echo "apps: build failed" >&2
  exit 1
}
rm -f "$blog"
for f in gdal_Zarr3.so zarr3; do
  [[ -f "$BUILD_DIR/$f" ]] || { echo "apps: $BUILD_DIR/$f missing" >&2; exit 1; }
done
t2=$(date +%s)
echo "apps: plugin and tool built in $((t2 - t1))s ($BUILD_DIR)"

log="$BUILD_DIR/apps-pytest.log"
rc=0
GDAL_DRIVER_PATH="$BUILD_DIR" QT_QPA_PLATFORM=offscreen \
  "$PYTHON" -m pytest autotest/test_qgis.py autotest/test_rasterio.py autotest/test_rioxarray.py autotest/test_dask.py \
  -q -p no:cacheprovider -rxXs 2>&1 | tee "$log" ||
  rc=1
t3=$(date +%s)

py=$(grep -E '[0-9]+ (passed|failed|error|errors|skipped)' "$log" | tail -1 || true)
count() { grep -oE "[0-9]+ $1" <<<"$py" | grep -oE '[0-9]+' || echo 0; }
passed=$(count passed)
failed=$(( $(count failed) + $(count error) + $(count errors) ))
skipped=$(count skipped)
if [[ "$skipped" -ne 0 || "$passed" -eq 0 ]]; then rc=1; fi
# Also appended to the log, so .ci/run can grep '^SUMMARY' in $BUILD_DIR/apps-pytest.log.
echo "SUMMARY: apps (QGIS, rasterio, rioxarray, dask) pytest $passed passed, $failed failed, $skipped skipped in $((t3 - t2))s" | tee -a "$log"
exit $rc
