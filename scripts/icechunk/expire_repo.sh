#!/usr/bin/env bash
# Makes a repository whose history the zarr3 tools expired and collected, for the real Icechunk to
# read (check_tools.mjs; gtest IcechunkMaintenance.InteropCheck), issue 43:
#
#   scripts/icechunk/expire_repo.sh ZARR3 SAMPLE OUT
#
# ZARR3: the zarr3 tool; SAMPLE: data/t2m_2023q1.icechunk (main: January, February, March commits by
# Icechunk; tag january; branch qc); OUT: absent, receives the copy. On top, by the tools: main
# compacted to 1-day chunks (tag daily), to 45-day chunks, back to months; OUT.before keeps that
# state; then zarr3 expire --older-than 2100-01-01 (every snapshot no branch or tag points at) and
# zarr3 gc --grace 0 on OUT.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 ZARR3 SAMPLE OUT" >&2; exit 2; }
Z=$1 SAMPLE=$2 OUT=$3
[ ! -e "$OUT" ] && [ ! -e "$OUT.before" ] || { echo "$OUT or $OUT.before exists" >&2; exit 2; }
cp -r "$SAMPLE" "$OUT"
# Manifests split every 7 time steps (issue 43): the daily chunks give 13 manifests for Icechunk to read.
export ZARR3_ICECHUNK_SPLIT_CHUNKS=7
"$Z" compact "$OUT" --array t2m --dim time --edges 1 --message "tools: daily chunks"
"$Z" tag "$OUT" daily
"$Z" compact "$OUT" --array t2m --dim time --edges 45 --message "tools: 45-day chunks"
"$Z" compact "$OUT" --array t2m --dim time --edges monthly --message "tools: monthly again"
cp -r "$OUT" "$OUT.before"
"$Z" expire "$OUT" --older-than 2100-01-01
"$Z" gc "$OUT" --grace 0
du -sb "$OUT.before" "$OUT"
"$Z" log "$OUT"
