"""The zarr3 tool as a newcomer meets it (issue 32, part): --help and --version exit 0, a wrong --edges
names the accepted forms, and a missing argument prints the usage with exit 2."""
import json
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def run(exe, *args):
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_prints_the_usage_and_exits_0(exe, flag):
    r = run(exe, flag)
    assert r.returncode == 0, r.stderr
    assert "usage: zarr3 info PATH" in r.stdout and "zarr3 compact PATH" in r.stdout


def test_help_lists_every_command_as_one_block_before_the_explanations(exe):
    """Issue 41: the tag and branch lines were interleaved with a sentence split across them, and
    the repository compaction's explanation sat between the command lines."""
    lines = run(exe, "--help").stdout.splitlines()
    assert lines[0].startswith("usage: zarr3 ")
    commands = [i for i, line in enumerate(lines) if line.startswith(("usage: zarr3 ", "       zarr3 "))]
    block = lines[:commands[-1] + 1]
    # one block: every line up to the last command line is a command line or its continuation
    for line in block:
        assert line.startswith(("usage: zarr3 ", "       zarr3 ", "                     [")), line
    verbs = {line.split("zarr3 ", 1)[1].split()[0] for line in block if "zarr3 " in line}
    for verb in ("info", "verify", "compact", "log", "tag", "branch", "--help"):
        assert verb in verbs, verb
    # a command line is a command, not a sentence: no parenthesised explanation on it
    assert not any("(" in line for line in block), block
    assert max(len(line) for line in lines) <= 100


def test_version_is_the_plugin_version(exe):
    r = run(exe, "--version")
    version = json.loads((REPO / "plugin.json").read_text())["version"]
    assert r.returncode == 0 and r.stdout.strip() == f"zarr3 (gdal-zarr3) {version}"


def test_missing_arguments_print_the_usage_with_exit_2(exe):
    r = run(exe)
    assert r.returncode == 2 and "missing arguments" in r.stderr and "usage:" in r.stderr


@pytest.mark.parametrize("edges", ["weekly", "{bad}", "7days"])
def test_unknown_edges_name_the_accepted_forms(exe, tmp_path, edges):
    store = tmp_path / "s.zarr"
    import shutil
    shutil.copytree(REPO / "data" / "daily_t2m_2023.zarr", store)
    before = sorted(p.name for p in (store / "t2m").rglob("*"))
    r = run(exe, "compact", store / "t2m", "--dim", "time", "--edges", edges)
    assert r.returncode != 0
    assert f"--edges {edges}: expected monthly, a chunk length N, or a JSON list" in r.stderr, r.stderr
    assert sorted(p.name for p in (store / "t2m").rglob("*")) == before
