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
"$Z" log "$OUT"
