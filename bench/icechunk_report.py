"""The "Icechunk" section of bench/RESULTS.md from bench/icechunk_e2e.py's
JSON (imported by report.py; also run alone by `scripts/bench.sh
--icechunk-only`, which replaces only this section of RESULTS.md):

    icechunk_report.py ICE.json RESULTS.md
"""
import json
import os
import re
import sys

TITLE = "## Icechunk"
EXTRA_TARGET = 3  # issue 29: at most 3 extra round trips in all (open + full read)


def ms(v):
    if v is None:
        return "n/a"
    return f"{v * 1e3:.1f}" if v < 0.1 else f"{v * 1e3:.0f}"


def phase(r, name, key):
    p = (r or {}).get(name)
    return None if p is None else p.get(key)


def cell(r, name):
    """'time ms / requests / round trips' of one phase over the proxy."""
    if r is None or name not in r:
        return "n/a"
    p = r[name]
    if "requests" not in p:
        return ms(p["wall"])
    return f"{ms(p['wall'])} / {p['requests']:g} / {p['round_trips']:g}"


def total(r, key):
    a, b = phase(r, "open", key), phase(r, "read", key)
    return None if a is None or b is None else a + b


def repo_rows(ice):
    rem, loc = ice.get("remote", {}), ice.get("local", {})
    lines = ["| API | phase | repository: ms / requests / round trips | plain store | "
             "extra round trips | local ms (repo / plain) |", "|---|---|---|---|---|---|"]
    summary = []
    for api in ("classic", "multidim"):
        repo, plain = rem.get("repo", {}).get(api), rem.get("plain", {}).get(api)
        lrepo, lplain = loc.get("repo", {}).get(api), loc.get("plain", {}).get(api)
        for ph in ("open", "read"):
            extra = None
            if phase(repo, ph, "round_trips") is not None:
                extra = phase(repo, ph, "round_trips") - phase(plain, ph, "round_trips")
            lines.append(f"| {api} | {ph} | {cell(repo, ph)} | {cell(plain, ph)} | "
                         f"{'n/a' if extra is None else f'{extra:+g}'} | "
                         f"{ms(phase(lrepo, ph, 'wall'))} / {ms(phase(lplain, ph, 'wall'))} |")
        if repo and plain:
            extra = total(repo, "round_trips") - total(plain, "round_trips")
            by_time = (total(repo, "wall") - total(plain, "wall")) / (ice["delay_ms"] / 1e3)
            ok = "ok" if extra <= EXTRA_TARGET else "MISS"
            summary.append(f"- {api}: open + full read, repository {total(repo, 'round_trips'):g} "
                           f"round trips ({total(repo, 'requests'):g} requests, "
                           f"{ms(total(repo, 'wall'))} ms) against the plain store's "
                           f"{total(plain, 'round_trips'):g} ({total(plain, 'requests'):g} "
                           f"requests, {ms(total(plain, 'wall'))} ms): **{extra:+g} round trips** "
                           f"(target <= {EXTRA_TARGET}: {ok}); by time "
                           f"{by_time:+.1f} round trips")
    return lines, summary


def virtual_rows(ice):
    lines = ["| where | reader | open: ms / requests / round trips | read | total ms |",
             "|---|---|---|---|---|"]
    for where, r in ice.get("virtual", {}).items():
        for reader, label in (("repo", "Icechunk virtual array /t2m (plugin)"),
                              ("netCDF", "netCDF driver, 3 files one by one"),
                              ("HDF5", "HDF5 driver, 3 files one by one")):
            v = r.get(reader)
            if v is None:
                continue
            if "error" in v:
                why = (" (GDAL's HDF5 driver leaves NetCDF-4 files to the netCDF driver)"
                       if reader == "HDF5" else "")
                lines.append(f"| {where} | {label} | cannot: {v['error']}{why} | | |")
                continue
            lines.append(f"| {where} | {label} | {cell(v, 'open')} | {cell(v, 'read')} | "
                         f"{ms(total(v, 'wall'))} |")
    return lines


def section(ice):
    if not ice:
        return [TITLE, "", "(not run: give BENCH_ICECHUNK_DATA or BENCH_TRIXIE_CHROOT)", ""]
    if "error" in ice:
        return [TITLE, "", f"(failed: {ice['error']})", ""]
    rows, summary = repo_rows(ice)
    noisy = max(ice.get("load_before", 0), ice.get("load_after", 0))
    note = (f"**Noisy**: load average {noisy:.1f} on this 2-core machine during the run; "
            "the request and round-trip counts do not depend on it, the times do."
            if noisy > 2.5 else f"Load average {noisy:.1f} during the run.")
    return [TITLE, "",
            f"`bench/icechunk_e2e.py`, GDAL {ice.get('gdal_version')}, GDAL_NUM_THREADS=2, each "
            f"run cold (vsicurl cache cleared), median of {ice.get('reps')} runs. Over HTTP: nginx "
            f"behind `autotest/latency_proxy.py` at {ice['delay_ms']:g} ms per request; round "
            "trips = the longest chain of requests each started after the previous one ended "
            "(proxy timestamps). Data: `scripts/icechunk/make_bench_data.sh` (real Icechunk "
            "2.2.2): /t2m float32 1024x1024, 256 chunks of 64x64, gzip, as a repository and as a "
            "plain Zarr v3 store with the same chunk bytes.", "", note, "",
            "### Repository against plain store (over the proxy)", "", *rows, "", *summary, "",
            "### Virtual array against the monthly NetCDF-4 files", "",
            "3 monthly files (31, 28, 31 days x 8 x 10, HDF5 chunks 1 month x 4 x 10, "
            "shuffle + zlib) read as one virtual rectilinear array (multidim API), against "
            "GDAL's own drivers reading the files one by one (multidim API). Remote: the "
            "repository over /vsicurl/, its references s3://zarr3-bench/... served by the same "
            "proxy (AWS_S3_ENDPOINT); the files over /vsicurl/.", "", *virtual_rows(ice), ""]


def replace_section(md_text, new_lines, title="Icechunk"):
    """RESULTS.md with its section "## <title>" replaced (or inserted before the
    absolute times, or appended)."""
    block = "\n".join(new_lines).rstrip() + "\n"
    pat = re.compile(r"^## " + re.escape(title) + r"\n.*?(?=^## |\Z)", re.S | re.M)
    if pat.search(md_text):
        return pat.sub(lambda m: block + "\n", md_text, count=1)
    anchor = md_text.find("## Absolute times")
    if anchor >= 0:
        return md_text[:anchor] + block + "\n" + md_text[anchor:]
    return md_text.rstrip() + "\n\n" + block


def write_section(md_path, lines, title="Icechunk"):
    """Prints `lines` and puts them into `md_path` as its section "## <title>"."""
    print("\n".join(lines))
    try:
        with open(md_path) as f:
            text = f.read()
    except FileNotFoundError:
        text = "# Benchmark results\n"
    with open(md_path, "w") as f:
        f.write(replace_section(text, lines, title))


def report_pair(report, section_of, title):
    """--report PLUGIN_JSON PEER_JSON RESULTS_MD of a bench against a peer: section_of(plugin, peer)
    (either None when its file is missing) replaces the section `title`."""
    def load(path):
        if not path or not os.path.exists(path):
            return None
        with open(path) as f:
            return json.load(f)
    write_section(report[2], section_of(load(report[0]), load(report[1])), title)


def run_and_print(a, bench, section_of):
    """Runs bench(a) (an exception becomes the result's "error": the section says why and the
    suite goes on), prints section_of(result), writes it to a.json when given; the exit code."""
    try:
        res = bench(a)
    except Exception as e:
        res = {"error": f"{type(e).__name__}: {e}"[:400]}
    print("\n".join(section_of(res)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 1 if "error" in res else 0


def report_or_plugin(ap, a, section_of, title):
    """The common start of a bench's main(): with --report JSON RESULTS_MD, writes that section and
    returns True (main returns 0); else requires --plugin-dir and sets a.env (GDAL_DRIVER_PATH)."""
    if a.report:
        with open(a.report[0]) as f:
            write_section(a.report[1], section_of(json.load(f)), title)
        return True
    if not a.plugin_dir:
        ap.error("--plugin-dir is required")
    a.env = dict(os.environ, GDAL_DRIVER_PATH=os.path.abspath(a.plugin_dir))
    return False


def main():
    ice_path, md_path = sys.argv[1:3]
    with open(ice_path) as f:
        ice = json.load(f)
    write_section(md_path, section(ice))


if __name__ == "__main__":
    main()
