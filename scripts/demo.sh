#!/usr/bin/env bash
# Demo of the Zarr3 plugin on data/daily_t2m_2023.zarr (one year of daily 2 m temperature on a
# rectilinear grid of calendar-month chunks, each a shard of gzip inner chunks). `make demo`
# installs the Debian packages and builds first.
# Then the Icechunk samples (scripts/icechunk/make_samples.sh): the versions of data/t2m_2023q1.icechunk
# and data/archive.icechunk, three monthly NetCDF-4 files read as one virtual array (read-only).
# usage: scripts/demo.sh [BUILD_DIR]   (default: build; outputs in BUILD_DIR/demo or $DEMO_OUT)
# Each step prints the command it runs and a short summary of the result (about 100 lines in all);
# the last lines name the files written, among them a colour map of July's mean temperature.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR=$(realpath "${1:-build}")
export GDAL_DRIVER_PATH="$BUILD_DIR"
PY=${PYTHON:-/usr/bin/python3}
STORE=data/daily_t2m_2023.zarr
OUT=$(realpath -m "${DEMO_OUT:-$BUILD_DIR/demo}")
rm -rf "$OUT" && mkdir -p "$OUT"
failures=0
fail() { echo "    FAILED: $*"; failures=$((failures + 1)); }

step() { echo; echo "==> $*"; }

[ -f "$BUILD_DIR/gdal_Zarr3.so" ] || { echo "no plugin in $BUILD_DIR; run 'make demo'"; exit 1; }

step "gdalinfo -nomd $STORE   (summary: the CRS name instead of its WKT, band 1 of 365)"
if gdalinfo -nomd "$STORE" >"$OUT/gdalinfo.txt"; then
  nbands=$(grep -c '^Band ' "$OUT/gdalinfo.txt")
  awk -v nb="$nbands" '
    /^Coordinate System is:/ { wkt = 1; next }
    wkt && /^[A-Z]+CRS\["/ && !name { name = $0; sub(/^[A-Z]+CRS\["/, "", name); sub(/".*/, "", name) }
    wkt && /^    ID\["EPSG",[0-9]+\]\]$/ { code = $0; gsub(/[^0-9]/, "", code) }
    wkt && /^Data axis/ { wkt = 0; print "Coordinate System: " name (code ? " (EPSG:" code ")" : ""); next }
    wkt { next }
    /^Band 2 / { print "... " nb " bands in all, one per day (full listing: gdalinfo " FILENAME ")"; exit }
    { print }' "$OUT/gdalinfo.txt" | sed "s#$OUT/gdalinfo.txt#$STORE#; s/^/    /"
else
  fail gdalinfo
fi

step "The chunk grid of /t2m (gdalinfo -mdd ZARR3: structural metadata)"
"$PY" - "$STORE" <<'PYEOF' || fail "chunk grid"
import json, sys
from osgeo import gdal
gdal.UseExceptions()
md = gdal.Open(sys.argv[1]).GetMetadata("ZARR3")
grid = json.loads(md["CHUNK_GRID"])
axes = []
for name, spec in zip(json.loads(md["DIMENSION_NAMES"]), grid["configuration"]["chunk_shapes"]):
    if isinstance(spec, list):  # rectilinear axis: edges and [edge, count] runs
        edges = [e for s in spec for e in ([s[0]] * s[1] if isinstance(s, list) else [s])]
        axes.append(f"{name}: {len(edges)} chunks of {','.join(map(str, edges))}")
    else:
        axes.append(f"{name}: chunks of {spec}")
codecs = json.loads(md["CODECS"])
inner = [c["name"] for c in codecs[0]["configuration"]["codecs"]] if codecs[0]["name"] == "sharding_indexed" else []
print(f"    {grid['name']} grid ({'; '.join(axes)})")
print(f"    each chunk is one stored shard of {md.get('SHARD_CHUNK_SHAPE', '?')} inner chunks ({' + '.join(inner)})")
PYEOF

step "gdalmdiminfo $STORE   (multidimensional view: one line per array)"
if gdalmdiminfo "$STORE" >"$OUT/mdiminfo.json"; then
  "$PY" - "$OUT/mdiminfo.json" <<'PYEOF' || fail "gdalmdiminfo summary"
import json, sys
info = json.load(open(sys.argv[1]))
print("    driver:", info["driver"], "| full JSON:", sys.argv[1])
for name, a in info["arrays"].items():
    dims = ",".join(d.lstrip("/") for d in a.get("dimensions", []))
    si = a.get("structural_info", {})
    print(f"    /{name}({dims}): {a['datatype']} {a.get('dimension_size', [])}, block {a.get('block_size', [])},",
          si.get("CHUNK_GRID", ""), si.get("CODECS", ""))
PYEOF
else
  fail gdalmdiminfo
fi

step "Monthly means of /t2m through GDAL's Python bindings (one read per monthly chunk)"
"$PY" - "$STORE" <<'PYEOF' || fail "monthly means"
import sys
from osgeo import gdal
gdal.UseExceptions()
t2m = gdal.OpenEx(sys.argv[1], gdal.OF_MULTIDIM_RASTER).GetRootGroup().OpenMDArray("t2m")
months = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
start, line = 0, []
for m, n in enumerate(months, 1):
    block = t2m.ReadAsArray(array_start_idx=[start, 0, 0], count=[n, 32, 64])
    line.append(f"2023-{m:02d} {block.mean() - 273.15:5.1f}")
    start += n
print("    mean over the domain, degC:")
for i in range(0, 12, 4):
    print("     ", " | ".join(line[i:i + 4]))
PYEOF

step "A colour map of July's mean temperature (Python + numpy, then gdaldem color-relief)"
JULY_TIF="$OUT/t2m_july_mean.tif"
MAP="$OUT/t2m_july_mean.png"
if "$PY" - "$STORE" "$JULY_TIF" <<'PYEOF'; then
import sys
from osgeo import gdal
gdal.UseExceptions()
src = gdal.Open(sys.argv[1])  # classic view: band b = day b of 2023
july = src.ReadAsArray(band_list=list(range(182, 213))).mean(axis=0) - 273.15  # 1-31 July
out = gdal.GetDriverByName("GTiff").Create(sys.argv[2], src.RasterXSize, src.RasterYSize, 1, gdal.GDT_Float32)
out.SetGeoTransform(src.GetGeoTransform())
out.SetSpatialRef(src.GetSpatialRef())
out.GetRasterBand(1).WriteArray(july)
print(f"    July mean: {july.min():.1f} to {july.max():.1f} degC -> {sys.argv[2]}")
PYEOF
  cat >"$OUT/ramp_degC.txt" <<'EOF'
0 49 54 149
6 69 117 180
10 116 173 209
13 171 217 233
16 254 224 144
19 253 174 97
22 244 109 67
26 165 0 38
EOF
  # Colours from the ramp, then enlarged 8 times (one 8x8 square per 1-degree pixel) as PNG.
  if gdaldem color-relief -q "$JULY_TIF" "$OUT/ramp_degC.txt" "$OUT/t2m_july_mean_rgb.tif" &&
     gdal_translate -q -of PNG -outsize 800% 800% -r nearest "$OUT/t2m_july_mean_rgb.tif" "$MAP"; then
    echo "    gdaldem color-relief $JULY_TIF ramp_degC.txt t2m_july_mean_rgb.tif"
    echo "    gdal_translate -of PNG -outsize 800% 800% t2m_july_mean_rgb.tif $MAP"
    echo "    ($(stat -c %s "$MAP") bytes, 512x256: blue 0-10 degC, yellow 16, red 22 degC and warmer)"
  else
    fail "gdaldem color-relief"
  fi
else
  fail "July mean"
fi

step "gdal_translate to GeoTIFF (classic raster: band 196 of ZARR3:\"$STORE\":/t2m = 2023-07-15)"
TIF="$OUT/t2m_day196.tif"
if gdal_translate -q "ZARR3:\"$STORE\":/t2m" -b 196 "$TIF"; then
  echo "    wrote $TIF:"
  gdalinfo "$TIF" | grep -E "^(Driver|Size|Origin|Pixel Size)|Block=" | sed 's/^/      /'
else
  fail gdal_translate
fi

step "Writing a new rectilinear, sharded Zarr v3 store from the GeoTIFF"
echo "    gdal_translate -of Zarr3 -co 'CHUNK_SHAPES=[[8,24],64]' -co SHARD_CHUNK_SHAPE=8,32 $TIF $OUT/from_geotiff.zarr"
if gdal_translate -q -of Zarr3 -co 'CHUNK_SHAPES=[[8,24],64]' -co SHARD_CHUNK_SHAPE=8,32 \
     "$TIF" "$OUT/from_geotiff.zarr"; then
  echo "    wrote $OUT/from_geotiff.zarr: $(cd "$OUT/from_geotiff.zarr" && ls | tr '\n' ' ')"
  gdalinfo -mdd ZARR3 "$OUT/from_geotiff.zarr" | grep -E "^(Size|Origin)|  CHUNK_GRID|SHARD_CHUNK_SHAPE|Block=" | sed 's/^/      /'
  if gdal_translate -q "$OUT/from_geotiff.zarr" "$OUT/roundtrip.tif" &&
     "$PY" - "$TIF" "$OUT/roundtrip.tif" <<'PYEOF'
import sys
from osgeo import gdal
a, b = (gdal.Open(p) for p in sys.argv[1:3])
same = a.ReadRaster() == b.ReadRaster() and a.GetGeoTransform() == b.GetGeoTransform()
print("    GeoTIFF -> Zarr3 -> GeoTIFF round trip:", "bit-exact" if same else "DIFFERS")
sys.exit(0 if same else 1)
PYEOF
  then :; else fail "round trip"; fi
else
  fail "gdal_translate -of Zarr3"
fi

step "A week of daily appends (gdal_translate -co APPEND_DIM=time), then a compaction into months"
WEEK="$OUT/week.zarr"
ok=1
for day in 29 30 31 32 33 34 35; do  # 2023-01-29 .. 2023-02-04: one new one-day chunk each
  date=$(date -u -d "2023-01-01 +$((day - 1)) days" +%F)
  gdal_translate -q -b "$day" "ZARR3:\"$STORE\":/t2m" "$OUT/day.tif" &&
    gdal_translate -q -of Zarr3 -co APPEND_DIM=time -co "APPEND_COORD=$date" -co ARRAY_NAME=t2m \
      -co APPEND_SUBDATASET=YES \
      "$OUT/day.tif" "$WEEK" || { ok=0; break; }
done
if [ "$ok" = 1 ]; then
  echo "    7 x gdal_translate -of Zarr3 -co APPEND_DIM=time -co APPEND_COORD=<date> -co APPEND_SUBDATASET=YES day.tif $WEEK"
  "$BUILD_DIR/zarr3" info "$WEEK/t2m" | grep -E "^(shape|  axis 0)" | sed 's/^/      /'
  echo "    $BUILD_DIR/zarr3 compact $WEEK/t2m --dim time --edges monthly"
  "$BUILD_DIR/zarr3" compact "$WEEK/t2m" --dim time --edges monthly | sed 's/^/      /' &&
    "$BUILD_DIR/zarr3" verify "$WEEK" | sed 's/^/      /' || fail "zarr3 compact/verify"
else
  fail "daily appends"
fi

# ------------------------------------------------------------------ Icechunk samples (issue 29)
# Read-only: GDAL_PAM_ENABLED=NO so that no .aux.xml is ever written into data/.
Q1=data/t2m_2023q1.icechunk
ARCHIVE=data/archive.icechunk
ARCHIVE_TMP=/tmp/gdal-zarr3-archive  # the virtual chunk container the references of $ARCHIVE name

step "Icechunk: the versions of $Q1 (zarr3 log: branches, tags, history of main)"
if "$BUILD_DIR/zarr3" log "$Q1" >"$OUT/log.txt"; then
  sed 's/^/    /' "$OUT/log.txt" | head -n 16
else
  fail "zarr3 log"
fi

step "Icechunk: one version per open (-oo BRANCH=/TAG=/SNAPSHOT=, or ICECHUNK:repo?tag=...)"
# The February commit's snapshot id, from the history zarr3 log printed above.
feb=$(sed -n 's/^\([0-9A-Z]\{20\}\)  .*February 2023 appended.*/\1/p' "$OUT/log.txt" 2>/dev/null | head -1)
[ -n "$feb" ] || fail "no February commit in zarr3 log"
for sel in "-oo BRANCH=main" "-oo TAG=january" "-oo SNAPSHOT=${feb:-?}" "ICECHUNK:$Q1?tag=january"; do
  case $sel in ICECHUNK:*) args=("$sel") ;; *) read -ra args <<<"$sel $Q1" ;; esac
  if GDAL_PAM_ENABLED=NO gdalinfo -mdd ICECHUNK "${args[@]}" >"$OUT/ice.txt"; then
    nb=$(grep -c '^Band ' "$OUT/ice.txt")
    printf '    gdalinfo %-58s %2s bands (%s)\n' "${args[*]}" "$nb" \
      "$(sed -n 's/^  SNAPSHOT_MESSAGE=//p' "$OUT/ice.txt" | cut -d: -f1)"
    case $sel in *SNAPSHOT=*) [ "$nb" = 59 ] || fail "SNAPSHOT=$feb: $nb bands, not February's 59" ;; esac
  else
    fail "gdalinfo ${args[*]}"
  fi
done

step "Icechunk: the same pixel on branch main and on branch qc (2023-02-14 = band 45, x=0 y=0)"
v_main=$(GDAL_PAM_ENABLED=NO gdallocationinfo -valonly -b 45 -oo BRANCH=main "$Q1" 0 0) || fail "gdallocationinfo main"
v_qc=$(GDAL_PAM_ENABLED=NO gdallocationinfo -valonly -b 45 -oo BRANCH=qc "$Q1" 0 0) || fail "gdallocationinfo qc"
echo "    gdallocationinfo -valonly -b 45 -oo BRANCH=main $Q1 0 0  -> $v_main K"
echo "    gdallocationinfo -valonly -b 45 -oo BRANCH=qc   $Q1 0 0  -> $v_qc K   (qc: corrected by -1.5 K)"
if [ -z "$v_main" ] || [ "$(awk -v a="$v_main" -v b="$v_qc" 'BEGIN { print (a - b == 1.5) }')" != 1 ]; then
  fail "qc correction not seen"
fi

step "A virtual archive: 3 monthly NetCDF-4 files as one Icechunk array (ZARR3:$ARCHIVE:/t2m)"
# Only the files missing there are copied, and only those (and the folder, if made here) are removed
# afterwards: files already there (README's worked example) stay; one that differs is not overwritten.
made_archive=0
copied=()
placed=1
if [ ! -e "$ARCHIVE_TMP" ]; then mkdir "$ARCHIVE_TMP" && made_archive=1; fi
for f in data/archive/t2m_2023-0[123].nc; do
  dst=$ARCHIVE_TMP/$(basename "$f")
  if [ -e "$dst" ]; then
    cmp -s "$f" "$dst" || { echo "    $dst exists and differs from $f: not overwritten"; placed=0; }
  elif cp "$f" "$dst"; then
    copied+=("$dst")
  else
    placed=0
  fi
done
if [ "$placed" = 1 ]; then
  kept=$((3 - ${#copied[@]}))
  echo "    cp data/archive/t2m_2023-0[123].nc $ARCHIVE_TMP/   (where the references point$(
    [ "$kept" = 0 ] || echo "; $kept already there, kept"))"
  GDAL_PAM_ENABLED=NO "$PY" - "ZARR3:$ARCHIVE:/t2m" "$ARCHIVE_TMP" <<'PYEOF' || fail "virtual archive"
import json, sys
import numpy as np
from osgeo import gdal
gdal.UseExceptions()
ds = gdal.OpenEx(sys.argv[1], gdal.OF_RASTER | gdal.OF_READONLY)
grid = json.loads(ds.GetMetadata("ZARR3")["CHUNK_GRID"])["configuration"]["chunk_shapes"][0]
print(f"    {sys.argv[1]}: {ds.RasterCount} bands, {ds.GetSpatialRef().GetName()}, time chunks {grid}")
days = ds.ReadAsArray()
parts = [gdal.Open(f'NETCDF:"{sys.argv[2]}/t2m_2023-0{m}.nc":t2m').ReadAsArray() for m in (1, 2, 3)]
feb14 = ds.GetRasterBand(45).ReadAsArray()
print(f"    2023-02-14: band 45 of the virtual array vs band 14 of t2m_2023-02.nc (netCDF driver):",
      "equal" if feb14.tobytes() == parts[1][13].tobytes() else "DIFFERENT", f"(mean {feb14.mean():.3f} K)")
same = days.tobytes() == np.concatenate(parts).tobytes()
print("    all 90 days vs the 3 files read one by one by the netCDF driver:", "equal" if same else "DIFFERENT")
sys.exit(0 if same and feb14.tobytes() == parts[1][13].tobytes() else 1)
PYEOF
else
  fail "copy to $ARCHIVE_TMP"
fi
if [ "${#copied[@]}" -gt 0 ]; then rm -f "${copied[@]}"; fi
[ "$made_archive" = 1 ] && rmdir "$ARCHIVE_TMP"
echo "    (removed the ${#copied[@]} file(s) copied to $ARCHIVE_TMP)"
echo
if [ "$failures" -ne 0 ]; then
  echo "demo: $failures step(s) failed"
  exit 1
fi
echo "demo: done. Outputs in $OUT:"
echo "  $MAP   <- open this: July 2023 mean temperature, colour map"
echo "  $TIF, $OUT/from_geotiff.zarr, $OUT/roundtrip.tif"
