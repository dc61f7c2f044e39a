#!/usr/bin/env bash
# Makes a repository with `zarr3 virtualize` for the real Icechunk to read (check_virtual.mjs;
# autotest/test_icechunk_interop.py::test_virtualize_*):
#
#   scripts/icechunk/virtual_repo.sh ZARR3 OUT
#
# OUT (absent) receives nc/t2m_2023-0{1..5}.nc (the NetCDF-4 files of autotest/test_cli_virtualize.py:
# 31/28/31/30/31 days; t2m shuffle + deflate, sp packed int16, tp in chunks of 10 days, whose padded
# last chunks are copied), repo.icechunk (the first 4 files, then the 5th with --append: two commits)
# and virtual.json (the two snapshot ids, the files, the container prefix); and sample.icechunk, a copy
# of the committed data/archive.icechunk (written by zarr3 virtualize, make_samples.sh) with its
# references moved by `zarr3 virtualize --relocate` to sample_nc/, a copy of data/archive/*.nc.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 ZARR3 OUT" >&2; exit 2; }
Z=$1 OUT=$2
[ ! -e "$OUT" ] || { echo "$OUT exists" >&2; exit 2; }
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$OUT/nc"
OUT=$(cd "$OUT" && pwd)
/usr/bin/python3 - "$HERE/../../autotest" "$OUT/nc" <<'PY'
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from virtual_months import write_month
for m, n in [(1, 31), (2, 28), (3, 31), (4, 30), (5, 31)]:
    write_month(Path(sys.argv[2]) / f"t2m_2023-{m:02d}.nc", m, n)
PY
"$Z" virtualize "$OUT/repo.icechunk" "$OUT"/nc/t2m_2023-0[1234].nc --concat-dim time \
  --message "virtualize: 4 months"
FIRST=$("$Z" log "$OUT/repo.icechunk" | awk '/^history/{h=1; next} h && NF {print $1; exit}')
"$Z" virtualize "$OUT/repo.icechunk" "$OUT/nc/t2m_2023-05.nc" --concat-dim time --append \
  --message "virtualize --append: May"
SECOND=$("$Z" log "$OUT/repo.icechunk" | awk '/^history/{h=1; next} h && NF {print $1; exit}')
printf '{"snapshots": {"%s": 4, "%s": 5}, "prefix": "file://%s/nc/"}\n' "$FIRST" "$SECOND" "$OUT" \
  >"$OUT/virtual.json"
"$Z" log "$OUT/repo.icechunk"
mkdir "$OUT/sample_nc"
cp "$HERE/../../data/archive"/t2m_2023-0[123].nc "$OUT/sample_nc/"
cp -r "$HERE/../../data/archive.icechunk" "$OUT/sample.icechunk"
"$Z" virtualize "$OUT/sample.icechunk" --relocate file:///tmp/gdal-zarr3-archive/ "file://$OUT/sample_nc/"
