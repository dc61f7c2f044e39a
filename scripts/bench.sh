#!/usr/bin/env bash
# Benchmark suite: builds the kernels and the plugin in build-bench (Release with
# debug info), generates the data into a temporary folder, runs the Google
# Benchmark kernels and the end-to-end GDAL runs, prints the ratio table with its
# targets and writes bench/RESULTS.md.
#
# usage: scripts/bench.sh [--icechunk-only | --append-only | --groups-only | --pan-only | --virtualize-only |
#                          --writers-only | --qgis-pan-only]
#   --icechunk-only: only the Icechunk rows (bench/icechunk_e2e.py), replacing only the section
#                    "Icechunk" of bench/RESULTS.md
#   --append-only:   only the daily appends into a plain store and an Icechunk repository and their
#                    compaction (bench/icechunk_append.py, issue 30), replacing only the section
#                    "Icechunk appends" of bench/RESULTS.md
#   --groups-only:   only gdalmdiminfo of 20,000 groups, a repository through the plugin against the
#                    same tree as a plain store through GDAL's own Zarr driver (bench/many_groups.py,
#                    issue 39), replacing only the section "Many groups" of bench/RESULTS.md
#   --pan-only:      only the pan rows (bench/pan.py, issue 44): 200 random unaligned 300x300
#                    windows and the same window again over a 4096x4096 float32 zstd array, sharded
#                    and regular, 1 thread and ALL_CPUS; with BENCH_SID_CHROOT the same reads by
#                    GDAL 3.13's own Zarr driver there and the ratio; replaces the section
#                    "Pan and zoom" of bench/RESULTS.md. BENCH_PAN_ARGS (e.g. "--size 512
#                    --windows 20 --again 5") shrinks it for a quick check
#   --qgis-pan-only: only the scripted QGIS pan (bench/qgis_pan.py, issue 44): the regular store
#                    of the pan rows opened as a layer in headless QGIS, 40 overlapping extents
#                    rendered (ms per frame); with BENCH_SID_CHROOT (python3-qgis installed there)
#                    the same pan by sid's QGIS on GDAL 3.13's own Zarr driver and the ratio;
#                    both sides also pan a GeoTIFF copy (the control: how much the QGIS and GDAL
#                    versions alone differ);
#                    replaces the section "QGIS pan" of bench/RESULTS.md. Skipped without
#                    python3-qgis on the host. BENCH_QGIS_PAN_ARGS="--size 512" shrinks it
#   --virtualize-only: only `zarr3 virtualize` of 100 daily NetCDF-4 files (per file, per chunk
#                    reference) and the full read of the virtual array against GDAL's netCDF driver
#                    on the same files, as ratios (bench/virtualize.py, issue 42), replacing only the
#                    section "Virtual archives" of bench/RESULTS.md. BENCH_VIRTUALIZE_ARGS (e.g.
#                    "--files 4 --nlat 20 --nlon 40 --chunk 10") shrinks it for a quick check
#   --writers-only:  only the many-writers rows (bench/many_writers.py, issue 43): a dask.distributed
#                    job of 8 disjoint windows of a 4096x4096 float32 array committed into an Icechunk
#                    repository on moto (127.0.0.1) with 1 and 2 worker processes, against one
#                    process writing a plain store on the same server, as ratios; replaces the
#                    section "Many writers" of bench/RESULTS.md. Needs moto_server (or
#                    ZARR3_MOTO_SERVER) and python3-distributed. BENCH_WRITERS_ARGS (e.g. "--size 256
#                    --block 64 --window 64x128") shrinks it for a quick check
# environment: BENCH_BUILD_DIR (default <repo>/build-bench), BENCH_REPS (default 5),
#              BENCH_JOBS (default 2), BENCH_KEEP=1 keeps the data folder,
#              BENCH_PLUGIN_DIR (default: the build folder) where gdal_Zarr3.so is loaded from,
#              BENCH_SID_CHROOT: a Debian sid chroot (GDAL 3.13) as the compatibility leg
#                makes it (`COMPAT_SUITE=sid COMPAT_DIR=DIR bash scripts/compat.sh --setup-only`);
#                when set, the plugin is built there and its writes are timed beside GDAL
#                3.13's built-in Zarr driver in one process (rows 10).
#              BENCH_ICECHUNK_DATA: a folder written by scripts/icechunk/make_bench_data.sh, or
#              BENCH_TRIXIE_CHROOT: a Debian 13 chroot in which to write one (needs root and npm);
#                without either, as root, make_bench_data.sh writes the data in a fresh Debian 13
#                chroot (a few minutes; BENCH_ICECHUNK=0 skips the Icechunk rows). The rows:
#                repository against plain store through the latency proxy, virtual array against
#                the netCDF driver.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BENCH_BUILD_DIR:-$REPO/build-bench}
REPS=${BENCH_REPS:-5}
JOBS=${BENCH_JOBS:-2}
PY=/usr/bin/python3
PLUGIN_DIR=${BENCH_PLUGIN_DIR:-$BUILD} # folder holding gdal_Zarr3.so
START=$(date +%s)
ONLY_ICE=0
ONLY_APPEND=0
ONLY_GROUPS=0
ONLY_PAN=0
ONLY_VIRT=0
ONLY_WRITERS=0
ONLY_QGIS_PAN=0
case "${1:-}" in
  --icechunk-only) ONLY_ICE=1 ;;
  --append-only) ONLY_APPEND=1 ;;
  --groups-only) ONLY_GROUPS=1 ;;
  --pan-only) ONLY_PAN=1 ;;
  --virtualize-only) ONLY_VIRT=1 ;;
  --writers-only) ONLY_WRITERS=1 ;;
  --qgis-pan-only) ONLY_QGIS_PAN=1 ;;
  "") ;;
  *) echo "usage: $0 [--icechunk-only | --append-only | --groups-only | --pan-only | --virtualize-only |" \
    "--writers-only | --qgis-pan-only]" >&2
     exit 2 ;;
esac

cmake -S "$REPO" -B "$BUILD" -DZARR3_BUILD_BENCH=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
if [ "$ONLY_ICE" = 1 ] || [ "$ONLY_GROUPS" = 1 ] || [ "$ONLY_PAN" = 1 ] || [ "$ONLY_WRITERS" = 1 ] ||
  [ "$ONLY_QGIS_PAN" = 1 ]; then
  cmake --build "$BUILD" -j"$JOBS" --target gdal_Zarr3
elif [ "$ONLY_APPEND" = 1 ] || [ "$ONLY_VIRT" = 1 ]; then
  cmake --build "$BUILD" -j"$JOBS" --target gdal_Zarr3 zarr3
else
  cmake --build "$BUILD" -j"$JOBS" --target zarr3_bench_gen zarr3_bench gdal_Zarr3 zarr3
fi

DATA=$(mktemp -d /tmp/zarr3-bench.XXXXXX)
cleanup() { [ "${BENCH_KEEP:-0}" = 1 ] && echo "data kept in $DATA" || rm -rf "$DATA"; }
trap cleanup EXIT

# icechunk_rows OUT.json: the Icechunk rows into OUT.json; false when skipped (no data, no chroot).
icechunk_rows() {
  local data=${BENCH_ICECHUNK_DATA:-}
  if [ "${BENCH_ICECHUNK:-1}" = 0 ] || { [ -z "$data" ] && [ "$(id -u)" != 0 ]; }; then
    echo "== Icechunk rows skipped: BENCH_ICECHUNK=0, or not root without BENCH_ICECHUNK_DATA" \
      "(a folder from scripts/icechunk/make_bench_data.sh)"
    return 1
  fi
  if [ -z "$data" ]; then
    echo "== Icechunk bench data (real Icechunk in ${BENCH_TRIXIE_CHROOT:-a fresh Debian 13 chroot})"
    data=$DATA/icechunk
    BENCH_TRIXIE_CHROOT=${BENCH_TRIXIE_CHROOT:-} bash "$REPO/scripts/icechunk/make_bench_data.sh" "$data" ||
      { echo "== Icechunk bench data FAILED" >&2; return 1; }
  fi
  echo "== Icechunk: repository vs plain store, virtual array vs netCDF ($data)"
  $PY "$REPO/bench/icechunk_e2e.py" --data "$data" --plugin-dir "$PLUGIN_DIR" \
    --reps "$REPS" --json "$1"
}

# append_rows OUT.json: one-day appends, plain store against Icechunk repository, and compaction
# (bench/icechunk_append.py: a 1826-day 180x360 cube, under a minute); its section of RESULTS.md.
append_rows() {
  echo "== Icechunk appends: one-day appends as commits vs plain store, compaction"
  $PY "$REPO/bench/icechunk_append.py" --plugin-dir "$PLUGIN_DIR" --zarr3 "$BUILD/zarr3" \
    --json "$1" || echo "== Icechunk appends FAILED (the section says why)" >&2
}

# groups_rows OUT.json: gdalmdiminfo of 20,000 groups, plugin on a repository against GDAL's own
# Zarr driver on the same tree as a plain store (bench/many_groups.py); its section of RESULTS.md.
groups_rows() {
  echo "== Many groups: gdalmdiminfo of 20,000 groups, plugin (repository) vs GDAL's Zarr driver"
  $PY "$REPO/bench/many_groups.py" --plugin-dir "$PLUGIN_DIR" --reps "$REPS" --json "$1" ||
    echo "== Many groups FAILED (the section says why)" >&2
}

# virtualize_rows OUT.json: zarr3 virtualize of daily NetCDF-4 files and the full read of the virtual
# array against GDAL's netCDF driver (bench/virtualize.py); its section of RESULTS.md.
virtualize_rows() {
  echo "== Virtual archives: zarr3 virtualize of daily NetCDF-4 files, virtual read vs netCDF driver"
  # shellcheck disable=SC2086
  $PY "$REPO/bench/virtualize.py" --plugin-dir "$PLUGIN_DIR" --reps "$REPS" --json "$1" \
    ${BENCH_VIRTUALIZE_ARGS:-} || echo "== Virtual archives FAILED (the section says why)" >&2
}

# writers_rows OUT.json: the dask job of disjoint windows committed into a repository on moto with 1
# and 2 workers against one process writing a plain store there (bench/many_writers.py).
writers_rows() {
  echo "== Many writers: dask job into a repository on moto, 1 and 2 workers, vs one plain writer"
  # shellcheck disable=SC2086
  $PY "$REPO/bench/many_writers.py" --plugin-dir "$PLUGIN_DIR" --reps "$REPS" --json "$1" \
    ${BENCH_WRITERS_ARGS:-} || echo "== Many writers FAILED (the section says why)" >&2
}

# pan_rows: the pan rows of the plugin (and of GDAL 3.13's own driver in BENCH_SID_CHROOT, on a
# copy of the same stores); its section of RESULTS.md.
pan_rows() {
  echo "== Pan and zoom: random 300x300 windows and the same window again, plugin vs GDAL's driver"
  local w=$DATA/pan
  # shellcheck disable=SC2086
  $PY "$REPO/bench/pan.py" --prepare --work "$w" --plugin-dir "$PLUGIN_DIR" ${BENCH_PAN_ARGS:-} &&
    $PY "$REPO/bench/pan.py" --work "$w" --driver Zarr3 --plugin-dir "$PLUGIN_DIR" --reps "$REPS" \
      --json "$DATA/pan.json" ${BENCH_PAN_ARGS:-} || echo "== Pan rows FAILED" >&2
  if [ -n "${BENCH_SID_CHROOT:-}" ]; then
    # shellcheck source=compat/chroot_lib.sh
    source "$REPO/scripts/compat/chroot_lib.sh"
    local R=$BENCH_SID_CHROOT peer=/tmp/zarr3-bench-pan-$$ mounted=()
    mountpoint -q "$R/proc" || mounted+=("$R/proc")
    mountpoint -q "$R/dev" || mounted+=("$R/dev")
    chroot_mount "$R"
    if ! mountpoint -q "$R$REPO"; then bind_same "$R" "$REPO" ro; mounted+=("$R$REPO"); fi
    mkdir -p "$R$peer" && cp -r "$w/sharded.zarr" "$w/regular.zarr" "$R$peer/"
    # shellcheck disable=SC2086
    in_chroot "$R" /usr/bin/python3 "$REPO/bench/pan.py" --work "$peer" --driver Zarr \
      --reps "$REPS" --json "$peer/peer.json" ${BENCH_PAN_ARGS:-} &&
      cp "$R$peer/peer.json" "$DATA/pan-peer.json" || echo "== Pan rows of GDAL's driver FAILED" >&2
    rm -rf "${R:?}$peer"
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -R "${mounted[$i]}" 2>/dev/null || true; done
  fi
  $PY "$REPO/bench/pan.py" --report "$DATA/pan.json" "$DATA/pan-peer.json" "$REPO/bench/RESULTS.md"
}

# qgis_pan_rows: the scripted QGIS pan over the regular store of the pan rows (bench/qgis_pan.py),
# the plugin in the host's QGIS and, with BENCH_SID_CHROOT, GDAL 3.13's own driver in sid's QGIS on
# a copy of the same store (mounts in a private namespace); its section of RESULTS.md.
qgis_pan_rows() {
  echo "== QGIS pan: 40 overlapping extents rendered headless, plugin vs GDAL's driver"
  local w=$DATA/pan
  if ! $PY -c "import qgis.core" 2>/dev/null; then
    echo "== QGIS pan skipped: $PY cannot import qgis.core (python3-qgis)"
    return 0
  fi
  # shellcheck disable=SC2086
  $PY "$REPO/bench/qgis_pan.py" --prepare --work "$w" --plugin-dir "$PLUGIN_DIR" ${BENCH_QGIS_PAN_ARGS:-} &&
    $PY "$REPO/bench/qgis_pan.py" --work "$w" --driver Zarr3 --plugin-dir "$PLUGIN_DIR" --reps "$REPS" \
      --json "$DATA/qgis-pan.json" || echo "== QGIS pan FAILED" >&2
  if [ -n "${BENCH_SID_CHROOT:-}" ]; then
    local R=$BENCH_SID_CHROOT peer=/tmp/zarr3-bench-qgis-pan-$$
    mkdir -p "$R$peer" && cp -r "$w/regular.zarr" "$w/regular.tif" "$R$peer/"
    # shellcheck disable=SC2016
    unshare --mount --propagation private bash -c 'source "$1/scripts/compat/chroot_lib.sh" &&
      chroot_mount "$2" && { mountpoint -q "$2$1" || bind_same "$2" "$1" ro; } &&
      in_chroot "$2" /usr/bin/python3 "$1/bench/qgis_pan.py" --work "$3" --driver Zarr --reps "$4" \
        --json "$3/peer.json"' _ "$REPO" "$R" "$peer" "$REPS" &&
      cp "$R$peer/peer.json" "$DATA/qgis-pan-peer.json" ||
      echo "== QGIS pan of GDAL's driver FAILED (python3-qgis installed in $R?)" >&2
    rm -rf "${R:?}$peer"
  fi
  $PY "$REPO/bench/qgis_pan.py" --report "$DATA/qgis-pan.json" "$DATA/qgis-pan-peer.json" \
    "$REPO/bench/RESULTS.md"
}

if [ "$ONLY_QGIS_PAN" = 1 ]; then
  qgis_pan_rows
  echo "(total $(($(date +%s) - START)) s; section QGIS pan of bench/RESULTS.md replaced)"
  exit 0
fi

if [ "$ONLY_PAN" = 1 ]; then
  pan_rows
  echo "(total $(($(date +%s) - START)) s; section Pan and zoom of bench/RESULTS.md replaced)"
  exit 0
fi

if [ "$ONLY_VIRT" = 1 ]; then
  virtualize_rows "$DATA/virtualize.json"
  $PY "$REPO/bench/virtualize.py" --report "$DATA/virtualize.json" "$REPO/bench/RESULTS.md" >/dev/null
  echo "(total $(($(date +%s) - START)) s; section Virtual archives of bench/RESULTS.md replaced)"
  exit 0
fi

if [ "$ONLY_WRITERS" = 1 ]; then
  writers_rows "$DATA/writers.json"
  $PY "$REPO/bench/many_writers.py" --report "$DATA/writers.json" "$REPO/bench/RESULTS.md" >/dev/null
  echo "(total $(($(date +%s) - START)) s; section Many writers of bench/RESULTS.md replaced)"
  exit 0
fi

if [ "$ONLY_GROUPS" = 1 ]; then
  groups_rows "$DATA/groups.json"
  $PY "$REPO/bench/many_groups.py" --report "$DATA/groups.json" "$REPO/bench/RESULTS.md" >/dev/null
  echo "(total $(($(date +%s) - START)) s; section Many groups of bench/RESULTS.md replaced)"
  exit 0
fi

if [ "$ONLY_APPEND" = 1 ]; then
  append_rows "$DATA/append.json"
  $PY "$REPO/bench/icechunk_append.py" --report "$DATA/append.json" "$REPO/bench/RESULTS.md" >/dev/null
  echo "(total $(($(date +%s) - START)) s; section Icechunk appends of bench/RESULTS.md replaced)"
  exit 0
fi

if [ "$ONLY_ICE" = 1 ]; then
  icechunk_rows "$DATA/icechunk.json" || exit 2
  $PY "$REPO/bench/icechunk_report.py" "$DATA/icechunk.json" "$REPO/bench/RESULTS.md"
  echo "(total $(($(date +%s) - START)) s; section Icechunk of bench/RESULTS.md replaced)"
  exit 0
fi

echo "== generating data in $DATA"
"$BUILD/bench/zarr3_bench_gen" "$DATA"

echo "== kernels"
ZARR3_BENCH_DATA=$DATA "$BUILD/bench/zarr3_bench" --benchmark_repetitions="$REPS" \
  --benchmark_report_aggregates_only=true --benchmark_min_time=0.2 \
  --benchmark_out="$DATA/kernels.json" --benchmark_out_format=json

echo "== end to end through GDAL"
$PY "$REPO/bench/e2e.py" --data "$DATA" --plugin-dir "$PLUGIN_DIR" --reps "$REPS" \
  --json "$DATA/e2e.json"

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$REPO" rev-parse --short HEAD)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores"
  echo "memory: $(free -m | awk '/Mem:/ {print $2}') MiB; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "kernel: $(uname -sr); compiler: $(c++ --version | head -1)"
  echo "zstd $(pkg-config --modversion libzstd 2>/dev/null || echo ?), libdeflate $(pkg-config --modversion libdeflate 2>/dev/null || echo ?), c-blosc $(pkg-config --modversion blosc 2>/dev/null || echo ?)"
} >"$DATA/machine.txt"

PEER_JSON=""
if [ -n "${BENCH_SID_CHROOT:-}" ]; then
  echo "== writes beside GDAL's built-in driver in $BENCH_SID_CHROOT"
  # shellcheck source=compat/chroot_lib.sh
  source "$REPO/scripts/compat/chroot_lib.sh"
  R=$BENCH_SID_CHROOT
  [ -x "$R/usr/bin/gdalinfo" ] || { echo "bench: $R has no GDAL (not a compat chroot)" >&2; exit 1; }
  mounted=()
  mountpoint -q "$R/proc" || mounted+=("$R/proc")
  mountpoint -q "$R/dev" || mounted+=("$R/dev")
  chroot_mount "$R"
  if ! mountpoint -q "$R$REPO"; then bind_same "$R" "$REPO" ro; mounted+=("$R$REPO"); fi
  PEER_DIR=/tmp/zarr3-bench-peer-$$
  mkdir -p "$R$PEER_DIR" && cp "$DATA/raw.f32" "$R$PEER_DIR/"
  in_chroot "$R" cmake -S "$REPO" -B "$PEER_DIR/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  in_chroot "$R" cmake --build "$PEER_DIR/build" -j"$JOBS" --target gdal_Zarr3 >/dev/null
  in_chroot "$R" /usr/bin/python3 "$REPO/bench/e2e.py" --data "$PEER_DIR" \
    --plugin-dir "$PEER_DIR/build" --reps "$REPS" --peer-writes --json "$PEER_DIR/peer.json"
  cp "$R$PEER_DIR/peer.json" "$DATA/peer.json" && PEER_JSON=$DATA/peer.json
  rm -rf "${R:?}$PEER_DIR"
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -R "${mounted[$i]}" 2>/dev/null || true; done
fi

ICE_JSON=""
if icechunk_rows "$DATA/icechunk.json"; then ICE_JSON=$DATA/icechunk.json; fi
append_rows "$DATA/append.json"
groups_rows "$DATA/groups.json"
virtualize_rows "$DATA/virtualize.json"
writers_rows "$DATA/writers.json"

echo "== ratios"
$PY "$REPO/bench/report.py" "$DATA/kernels.json" "$DATA/e2e.json" "$REPO/bench/RESULTS.md" \
  "$DATA/machine.txt" "$PEER_JSON" "$ICE_JSON"
# report.py rewrites RESULTS.md; the append section goes in before the absolute times.
[ -f "$DATA/append.json" ] &&
  $PY "$REPO/bench/icechunk_append.py" --report "$DATA/append.json" "$REPO/bench/RESULTS.md"
[ -f "$DATA/groups.json" ] &&
  $PY "$REPO/bench/many_groups.py" --report "$DATA/groups.json" "$REPO/bench/RESULTS.md"
[ -f "$DATA/virtualize.json" ] &&
  $PY "$REPO/bench/virtualize.py" --report "$DATA/virtualize.json" "$REPO/bench/RESULTS.md"
[ -f "$DATA/writers.json" ] &&
  $PY "$REPO/bench/many_writers.py" --report "$DATA/writers.json" "$REPO/bench/RESULTS.md"
pan_rows
qgis_pan_rows
echo "(total $(($(date +%s) - START)) s; written bench/RESULTS.md)"
