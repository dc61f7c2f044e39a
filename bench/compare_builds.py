#!/usr/bin/env python3
"""Compares two builds of the plugin row by row: the end-to-end results
(bench/e2e.py --json) of runs that alternated between build A (before) and
build B (after) on the same data in one session, so that the machine's
noise falls on both. Prints, for every timed row, the median wall and CPU
milliseconds of each build, the ratio B / A, and the run-to-run spread of
A (max / min of A's own medians): a ratio inside that spread is noise.

usage: compare_builds.py A1.json B1.json A2.json B2.json ...
"""
import json
import statistics
import sys


def timed_rows(res, prefix=""):
    """{row name: (wall ms, cpu ms or None)} for every dict holding 'wall'
    (a row that failed, {"error": ...}, is printed and left out)."""
    out = {}
    if isinstance(res, dict):
        if "error" in res and "wall" not in res:
            print(f"{prefix}: {res['error']}", file=sys.stderr)
            return out
        if "wall" in res and isinstance(res["wall"], (int, float)):
            cpu = res.get("cpu")
            out[prefix] = (res["wall"] * 1e3, cpu * 1e3 if isinstance(cpu, (int, float)) else None)
            return out
        for k, v in res.items():
            out.update(timed_rows(v, f"{prefix}/{k}" if prefix else k))
    return out


def main(paths):
    if len(paths) < 2 or len(paths) % 2:
        sys.exit("usage: compare_builds.py A1.json B1.json [A2.json B2.json ...]")
    runs = {"A": [], "B": []}
    for i, p in enumerate(paths):
        with open(p) as f:
            runs["A" if i % 2 == 0 else "B"].append(timed_rows(json.load(f)))
    names = [n for n in runs["A"][0] if all(n in r for r in runs["A"] + runs["B"])]
    print("| row | A wall ms | B wall ms | B/A wall | A cpu ms | B cpu ms | B/A cpu | A spread |")
    print("|---|---|---|---|---|---|---|---|")
    worse = []
    for n in names:
        aw = [r[n][0] for r in runs["A"]]
        bw = [r[n][0] for r in runs["B"]]
        ac = [r[n][1] for r in runs["A"] if r[n][1] is not None]
        bc = [r[n][1] for r in runs["B"] if r[n][1] is not None]
        a, b = statistics.median(aw), statistics.median(bw)
        spread = max(aw) / min(aw) if min(aw) > 0 else float("nan")
        ratio = b / a if a > 0 else float("nan")
        cpu = ""
        if ac and bc:
            ca, cb = statistics.median(ac), statistics.median(bc)
            cpu = f"{ca:.1f} | {cb:.1f} | {cb / ca:.2f}" if ca > 0 else "- | - | -"
        else:
            cpu = "- | - | -"
        print(f"| {n} | {a:.1f} | {b:.1f} | {ratio:.2f} | {cpu} | {spread:.2f} |")
        if ratio > spread and ratio > 1.0:
            worse.append((n, ratio, spread))
    print()
    if worse:
        print("rows where B is slower than A by more than A's own spread:")
        for n, r, s in worse:
            print(f"  {n}: {r:.2f} (spread {s:.2f})")
    else:
        print("no row of B is slower than A by more than A's own run-to-run spread")


if __name__ == "__main__":
    main(sys.argv[1:])
