#!/usr/bin/env bash
# Demo of the Zarr3 plugin on data/daily_t2m_2023.zarr (one year of daily data on a
# rectilinear grid of calendar-month chunks, sharded). `make demo` builds first.
# usage: scripts/demo.sh [BUILD_DIR]   (default: build)
# Each step says what it did.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR=$(realpath "${1:-build}")
export GDAL_DRIVER_PATH="$BUILD_DIR"
PY=${PYTHON:-/usr/bin/python3}
STORE=data/daily_t2m_2023.zarr
OUT=${DEMO_OUT:-$BUILD_DIR/demo}
rm -rf "$OUT" && mkdir -p "$OUT"
failures=0

step() { echo; echo "==> $*"; }

[ -f "$BUILD_DIR/gdal_Zarr3.so" ] || { echo "no plugin in $BUILD_DIR; run 'make demo'"; exit 1; }

step "gdalinfo $STORE  (served by the Zarr3 plugin, no prefix needed)"
gdalinfo "$STORE" || failures=$((failures + 1))

step "gdalmdiminfo $STORE  (multidimensional view: groups, arrays, dimensions, chunking)"
gdalmdiminfo "$STORE" >"$OUT/mdiminfo.json" && "$PY" - "$OUT/mdiminfo.json" <<'PYEOF' || failures=$((failures + 1))
import json, sys
info = json.load(open(sys.argv[1]))
print("driver:", info["driver"])
for name, a in info["arrays"].items():
    si = a.get("structural_info", {})
    print(f"  /{name}: {a['datatype']} shape {a.get('dimension_size', [])} block {a.get('block_size', [])}",
          si.get("CHUNK_GRID", ""), si.get("CODECS", ""))
PYEOF

step "Reading /t2m through GDAL's Python bindings: monthly means over the domain"
"$PY" - "$STORE" <<'PYEOF' || failures=$((failures + 1))
import sys
import numpy as np
from osgeo import gdal
gdal.UseExceptions()
ds = gdal.OpenEx(sys.argv[1], gdal.OF_MULTIDIM_RASTER)
t2m = ds.GetRootGroup().OpenMDArray("t2m")
print("driver:", ds.GetDriver().ShortName, "| block size (most common month):", t2m.GetBlockSize(),
      "| CRS:", t2m.GetSpatialRef().GetName() if t2m.GetSpatialRef() else None)
months = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
start = 0
for m, n in enumerate(months, 1):
    block = t2m.ReadAsArray(array_start_idx=[start, 0, 0], count=[n, 32, 64])
    print(f"  2023-{m:02d}: {n:2d} days, mean {block.mean() - 273.15:6.2f} degC")
    start += n
PYEOF

step "gdal_translate to GeoTIFF (classic raster mode: band 196 of ZARR3:\"$STORE\":/t2m = 2023-07-15)"
TIF="$OUT/t2m_day196.tif"
if gdal_translate -q "ZARR3:\"$STORE\":/t2m" -b 196 "$TIF"; then
  echo "    wrote $TIF:"
  gdalinfo "$TIF" | grep -E "^(Driver|Size|Origin|Pixel Size)|ID\[\"EPSG\",4326\]\]$|Block=" | sed 's/^/      /'
else
  failures=$((failures + 1))
fi

step "Zarr3 -> PNG with gdal_translate (scaled to 8 bits)"
if gdal_translate -q -of PNG -ot Byte -a_nodata none -scale 255 300 0 255 -b 196 "$STORE" "$OUT/t2m_day196.png"; then
  echo "    wrote $OUT/t2m_day196.png ($(stat -c %s "$OUT/t2m_day196.png") bytes)"
else
  failures=$((failures + 1))
fi

step "Writing a new rectilinear, sharded Zarr v3 store from the GeoTIFF"
echo "    gdal_translate -of Zarr3 -co CHUNK_SHAPES='[[8,24],64]' -co SHARD_CHUNK_SHAPE=8,32 $TIF $OUT/from_geotiff.zarr"
if gdal_translate -q -of Zarr3 -co 'CHUNK_SHAPES=[[8,24],64]' -co SHARD_CHUNK_SHAPE=8,32 \
     "$TIF" "$OUT/from_geotiff.zarr"; then
  echo "    wrote $OUT/from_geotiff.zarr: $(cd "$OUT/from_geotiff.zarr" && ls | tr '\n' ' ')"
  gdalinfo -mdd ZARR3 "$OUT/from_geotiff.zarr" | grep -E "^(Driver|Size|Origin|Pixel Size)|CHUNK_GRID|SHARD_CHUNK_SHAPE|Block=" | sed 's/^/      /'
  if gdal_translate -q "$OUT/from_geotiff.zarr" "$OUT/roundtrip.tif" &&
     "$PY" - "$TIF" "$OUT/roundtrip.tif" <<'PYEOF'
import sys
from osgeo import gdal
a, b = (gdal.Open(p) for p in sys.argv[1:3])
same = a.ReadRaster() == b.ReadRaster() and a.GetGeoTransform() == b.GetGeoTransform()
print("    GeoTIFF -> Zarr3 -> GeoTIFF round trip:", "bit-exact" if same else "DIFFERS")
sys.exit(0 if same else 1)
PYEOF
  then :; else failures=$((failures + 1)); fi
else
  failures=$((failures + 1))
fi

echo
if [ "$failures" -ne 0 ]; then
  echo "demo: $failures step(s) failed"
  exit 1
fi
echo "demo: done (outputs in $OUT)"
