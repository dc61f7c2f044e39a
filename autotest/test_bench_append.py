"""bench/icechunk_append.py (issue 30, Speed) at smoke-test sizes: the script builds both cubes,
times the appends, prints the rows, and its section replaces only itself in RESULTS.md. No timing
assertions: the counts are checked."""
import datetime
import json
import os
import subprocess
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
import icechunk_append  # noqa: E402

BUILD = os.environ["GDAL_DRIVER_PATH"]


def test_month_edges_follow_the_calendar():
    assert icechunk_append.month_edges(datetime.date(2019, 1, 11), 21 + 28 + 3) == [21, 28, 3]
    assert sum(icechunk_append.month_edges(datetime.date(2019, 1, 11), 1816)) == 1816
    assert icechunk_append.month_edges(datetime.date(2020, 2, 1), 29) == [29]  # leap year


def test_written_counts_new_and_changed_files(tmp_path):
    (tmp_path / "a").write_bytes(b"x" * 10)
    before = icechunk_append.listing(tmp_path)
    (tmp_path / "b").write_bytes(b"y" * 5)
    os.replace(tmp_path / "b", tmp_path / "a")  # a replaced (new inode), b gone
    (tmp_path / "c").write_bytes(b"z" * 7)
    assert icechunk_append.written(before, icechunk_append.listing(tmp_path)) == (2, 12)


def test_small_run_prints_the_rows_and_replaces_its_section(tmp_path):
    out = tmp_path / "append.json"
    p = subprocess.run([sys.executable, str(REPO / "bench" / "icechunk_append.py"), "--plugin-dir",
                        BUILD, "--small", "--json", str(out), "--work", str(tmp_path / "w")],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    res = json.loads(out.read_text())
    # The cube: 110 days in calendar months, then 10 one-day chunks (one run).
    shapes = res["layout"]["configuration"]["chunk_shapes"][0]
    assert shapes[-1] == [1, 10] and sum(shapes[:-1]) == 110
    assert res["commits_start"] == 12  # initial + creation + 10 daily appends
    for ph in ("short", "long"):
        repo, plain = res[ph]["repo"], res[ph]["plain"]
        assert repo["commits"] == [1] and repo["n"] == 2
        assert len(repo["objects"]) == 1 and repo["objects"][0] > 0 and plain["objects"][0] > 0
        assert repo["bytes"] > 0 and plain["bytes"] > 0
    assert res["short"]["repo"]["objects"] == res["long"]["repo"]["objects"]
    assert res["check_before"] == "ok" and res["check_after"] == "ok"
    assert res["library"]["plain"] > 0 and res["library"]["repo"] > 0 and res["library_ratio"] > 0
    assert res["commits_long"] == res["commits_short"] + 2 + 3
    assert "wall" in res["compaction"]["plain_compact"] and "wall" in res["compaction"]["plain_rewrite"]
    for row in ("| 12 commits | plain store | 2 |", "| 17 commits | repository | 2 |",
                "repository / plain append time", "(constant)", "| plain store | ",
                "in process (`gdal.Translate`", "bytes above the plain store's"):
        assert row in p.stdout, row
    md = tmp_path / "RESULTS.md"
    md.write_text("# R\n\n## Icechunk\n\nice\n\n## Icechunk appends\n\nOLDROWS\n\n## Absolute times\n\ny\n")
    icechunk_append.report(str(out), str(md))
    text = md.read_text()
    assert "OLDROWS" not in text and "\nice\n" in text and text.endswith("y\n")
    assert text.index("## Icechunk\n") < text.index("## Icechunk appends") < text.index("## Absolute")


def test_failure_is_a_section_not_a_crash():
    assert "(failed: boom)" in "\n".join(icechunk_append.section({"error": "boom"}))
    assert "(not run)" in "\n".join(icechunk_append.section(None))
