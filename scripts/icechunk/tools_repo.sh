#!/usr/bin/env bash
# Makes a repository changed by the zarr3 tools only, for the real Icechunk to read
# (check_tools.mjs; gtest IcechunkWrite.ToolsInteropCheck):
#
#   scripts/icechunk/tools_repo.sh ZARR3 SAMPLE OUT
#
# ZARR3: the zarr3 tool; SAMPLE: data/t2m_2023q1.icechunk (main: January, February, March commits
# by Icechunk; tag january; branch qc); OUT: absent, receives the copy. On top, by the tools:
# main: compaction to 1-day chunks, tag daily, compaction back to months, tag monthly;
# branch review from tag january with a compaction to 7-day chunks; branch work at daily.
# Then GDAL through the plugin beside ZARR3 (GDAL_DRIVER_PATH), on branches of their own: branch gdal
# (from monthly) gets a gdal_translate append of 2023-04-01 and an update of band 1 through Python, each
# one commit; branch gdalcopy (from monthly) gets a gdalmdimtranslate -co ICECHUNK=YES copy of the
# repository's main into itself (one commit replacing the contents).
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 ZARR3 SAMPLE OUT" >&2; exit 2; }
Z=$1 SAMPLE=$2 OUT=$3
[ ! -e "$OUT" ] || { echo "$OUT exists" >&2; exit 2; }
cp -r "$SAMPLE" "$OUT"
"$Z" compact "$OUT" --array t2m --dim time --edges 1 --message "tools: daily chunks"
"$Z" tag "$OUT" daily
"$Z" branch "$OUT" work daily
"$Z" branch "$OUT" review january
"$Z" compact "$OUT" --array t2m --dim time --edges 7 --branch review --message "tools: weekly on review"
"$Z" compact "$OUT" --array t2m --dim time --edges monthly --message "tools: monthly again"
"$Z" tag "$OUT" monthly
export GDAL_DRIVER_PATH
GDAL_DRIVER_PATH=$(cd "$(dirname "$Z")" && pwd)
"$Z" branch "$OUT" gdal monthly
"$Z" branch "$OUT" gdalcopy monthly
DAY=$(mktemp /tmp/zarr3-tools-day.XXXXXX.tif)
trap 'rm -f "$DAY"' EXIT
gdal_translate -q -b 90 "ZARR3:\"$OUT\":/t2m" "$DAY"
gdal_translate -q -of Zarr3 -co APPEND_DIM=time -co APPEND_COORD=2023-04-01 -co APPEND_SUBDATASET=YES \
  -co BRANCH=gdal -co COMMIT_MESSAGE="gdal: append 2023-04-01" "$DAY" "$OUT"
/usr/bin/python3 - "$OUT" <<'PY'
import sys
from osgeo import gdal
gdal.UseExceptions()
ds = gdal.OpenEx(sys.argv[1], gdal.OF_RASTER | gdal.OF_UPDATE,
                 open_options=["BRANCH=gdal", "COMMIT_MESSAGE=gdal: update day 1"])
band = ds.GetRasterBand(1)
band.WriteArray(band.ReadAsArray() + 1)
ds = None
PY
gdalmdimtranslate -q -of Zarr3 -co ICECHUNK=YES -co BRANCH=gdalcopy -co COMMIT_MESSAGE="gdal: copy" \
  "ZARR3:\"$OUT\"" "$OUT"
"$Z" log "$OUT"
