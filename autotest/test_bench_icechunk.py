"""The Icechunk bench helpers (bench/icechunk_e2e.py, bench/icechunk_report.py): the round-trip
count from the proxy's request times, and the RESULTS.md section replaced in place."""
import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
import icechunk_e2e  # noqa: E402
import icechunk_report  # noqa: E402


def test_round_trips_is_the_longest_chain_of_sequential_requests():
    rt = icechunk_e2e.round_trips
    assert rt([]) == 0
    # three in a row, then 4 at once: 4 round trips
    seq = [[0.0, 0.05], [0.06, 0.11], [0.12, 0.17]] + [[0.18, 0.25 + i / 100] for i in range(4)]
    assert rt(seq) == 4
    # all overlapping: one; an unfinished request counts as ending when it started
    assert rt([[0.0, 0.1], [0.01, 0.2], [0.05, 0.3]]) == 1
    assert rt([[0.0, None], [0.0, 0.1]]) == 2  # starts at the other's (zero-length) end
    # order of the log does not matter
    assert rt(list(reversed(seq))) == 4


def test_section_replaces_only_the_icechunk_section():
    old = "# R\n\n## Ratios\n\nx\n\n## Icechunk\n\nold rows\n\n### sub\n\nold\n\n## Absolute times\n\ny\n"
    new = icechunk_report.replace_section(old, ["## Icechunk", "", "new rows"])
    assert "old" not in new and "new rows" in new
    assert new.index("## Ratios") < new.index("new rows") < new.index("## Absolute times")
    assert new.endswith("y\n")
    # absent: inserted before the absolute times
    fresh = icechunk_report.replace_section("# R\n\n## Absolute times\n\ny\n", ["## Icechunk", "", "z"])
    assert fresh.index("z") < fresh.index("## Absolute times")


def test_section_counts_extra_round_trips():
    def phases(o_rt, r_rt):
        return {"open": {"wall": 0.1 * o_rt, "requests": o_rt, "round_trips": o_rt},
                "read": {"wall": 0.1 * r_rt, "requests": 256, "round_trips": r_rt}}
    ice = {"delay_ms": 50, "reps": 1, "gdal_version": "x",
           "remote": {"repo": {"classic": phases(3, 4), "multidim": phases(9, 4)},
                      "plain": {"classic": phases(4, 3), "multidim": phases(5, 3)}}}
    text = "\n".join(icechunk_report.section(ice))
    assert "**+0 round trips** (target <= 3: ok)" in text
    assert "**+5 round trips** (target <= 3: MISS)" in text
    assert "not run" in "\n".join(icechunk_report.section(None))
