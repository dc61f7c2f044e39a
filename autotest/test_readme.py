"""Every shell and Python example in README.md runs, as written, on the sample data.

The fenced ```sh and ```python blocks are extracted from README.md and run in order in one
temporary folder holding a copy of data/ (so the examples' relative paths work and their
outputs land there), with the plugin under test on GDAL_DRIVER_PATH. Each command must exit 0
and print no "ERROR" on stderr; some outputs are checked for what the example says it does.

A few commands cannot run as written inside the test suite; each has a local equivalent or a
stated reason (LOCAL below). A `make` target or other command the README gains without an
entry here fails the test, so the README cannot drift from what works. No example needs the
network or a server today; one that does must be added to LOCAL with a local equivalent.
"""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from osgeo import gdal

from conftest import REPO
from icechunk_samples import ARCHIVE_GROUP

pytestmark = ARCHIVE_GROUP  # the demo and README's examples use /tmp/gdal-zarr3-archive

README = REPO / "README.md"
FENCE = re.compile(r"^```(\w*)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)

# Bare command (comment stripped) -> (local equivalent run instead, or None = not run; reason).
# $REPO, $PLUGIN_DIR and $WORK are set in the commands' environment.
LOCAL = {
    "make build": ('test -f "$PLUGIN_DIR/gdal_Zarr3.so"',
                   "the plugin under test is already built: checks it is there"),
    "export GDAL_DRIVER_PATH=$PWD/build": ('test -n "$GDAL_DRIVER_PATH"',
                                           "the test sets GDAL_DRIVER_PATH to the plugin under test"),
    "make demo": ('DEMO_OUT="$WORK/demo" bash "$REPO/scripts/demo.sh" "$PLUGIN_DIR"',
                  "make demo = install packages + build + scripts/demo.sh: runs scripts/demo.sh"),
    "make test": (None, "the suite this test belongs to (running it here would recurse)"),
    "make package": (None, "builds the .deb in the build folder; the package leg (scripts/test-package.sh) "
                           "installs it in a clean Debian 12 chroot and opens the sample there"),
    "make install": ('DESTDIR="$WORK/destdir" cmake --install "$PLUGIN_DIR"',
                     "installs into the system plugin folder: cmake --install into a temporary DESTDIR"),
}


def bare(cmd):
    """The command without a trailing ' # comment' (README commands have no '#' inside quotes)."""
    return re.sub(r"\s+#.*$", "", cmd, flags=re.M).strip()


def shell_commands(body):
    """Logical commands of a shell block: continuation lines joined, comment-only lines dropped."""
    out, cur = [], ""
    for line in body.splitlines():
        if not cur and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            cur += bare(line.rstrip()[:-1]) + " "
            continue
        cur += line
        out.append(cur.strip())
        cur = ""
    assert not cur, f"unterminated continuation in README block: {cur!r}"
    return out


def examples():
    """[(id, kind, text)] in README order: kind 'sh' (one command) or 'python' (one block)."""
    text = README.read_text()
    out = []
    for m in FENCE.finditer(text):
        lang, body = m.group(1), m.group(2)
        line = text.count("\n", 0, m.start()) + 1
        if lang in ("sh", "bash", "shell", "console"):
            for i, cmd in enumerate(shell_commands(body)):
                word = re.sub(r"\W+", "_", bare(cmd))[:40].strip("_")
                out.append((f"L{line}.{i}-{word}", "sh", cmd))
        elif lang == "python":
            out.append((f"L{line}-python", "python", body))
    return out


EXAMPLES = examples()
PY_PATH_LINE = 'os.environ["GDAL_DRIVER_PATH"] = "/path/to/gdal-zarr3/build"'


def run_example(kind, text, env, work):
    if kind == "python":
        assert PY_PATH_LINE in text, "the Python example must set GDAL_DRIVER_PATH before importing osgeo"
        code = text.replace(PY_PATH_LINE, f'os.environ["GDAL_DRIVER_PATH"] = {env["PLUGIN_DIR"]!r}')
        if "july = " in code:  # what the example reads: July (31 days) of the 32 x 64 grid
            code += "\nassert july.shape == (31, 32, 64), july.shape\nprint('july mean', float(july.mean()))\n"
        p = subprocess.run(["/usr/bin/python3", "-c", code], cwd=work, env=env, capture_output=True,
                           text=True, timeout=300)
        return {"ran": "python block", "rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr}
    b = bare(text)
    if b in LOCAL:
        cmd, reason = LOCAL[b]
        if b == "make install" and not (Path(env["PLUGIN_DIR"]) / "cmake_install.cmake").exists():
            cmd, reason = None, f"GDAL_DRIVER_PATH={env['PLUGIN_DIR']} is not a CMake build folder"
        if cmd is None:
            return {"ran": None, "reason": reason}
    elif b.startswith("make ") or b.startswith("sudo "):
        return {"ran": None, "reason": f"no local equivalent for {b!r}: add one to LOCAL in {__file__}",
                "unknown": True}
    else:
        cmd = text
    p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=work, env=env, capture_output=True,
                       text=True, timeout=300)
    return {"ran": cmd, "rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr}


@pytest.fixture(scope="module")
def readme_run(tmp_path_factory, driver_path):
    """Runs every example once, in README order (later examples use earlier outputs)."""
    work = tmp_path_factory.mktemp("readme")
    shutil.copytree(REPO / "data", work / "data")
    env = dict(os.environ, GDAL_DRIVER_PATH=driver_path, PLUGIN_DIR=driver_path, REPO=str(REPO),
               WORK=str(work), PWD=str(work))
    results = {ex_id: run_example(kind, text, env, work) for ex_id, kind, text in EXAMPLES}
    return work, results


def test_readme_has_its_examples():
    kinds = [k for _, k, _ in EXAMPLES]
    cmds = [bare(t) for _, k, t in EXAMPLES if k == "sh"]
    assert kinds.count("python") >= 1 and len(cmds) >= 15, EXAMPLES
    for expected in ("make demo", "gdalwarp -t_srs EPSG:3857 out.zarr warped.tif", "gdalmdiminfo data/daily_t2m_2023.zarr"):
        assert expected in cmds, cmds
    # Continuation lines are joined into one command.
    assert any(c.startswith("gdal_translate -of Zarr3 -co 'CHUNK_SHAPES=") and c.endswith("in.tif out.zarr")
               for c in cmds), cmds


@pytest.mark.parametrize("ex_id", [e[0] for e in EXAMPLES])
def test_readme_example_runs(readme_run, ex_id):
    _, results = readme_run
    r = results[ex_id]
    assert not r.get("unknown"), r["reason"]
    if r["ran"] is None:
        pytest.skip(f"not run inside the test suite: {r['reason']}")
    detail = f"{ex_id}: ran {r['ran']!r}\nstdout:\n{r['stdout'][-3000:]}\nstderr:\n{r['stderr'][-3000:]}"
    assert r["rc"] == 0, detail
    if "--config ZARR3_PRECEDENCE NO" in r["ran"]:
        # Deliberately GDAL's built-in driver: GDAL 3.8-3.12 print errors of their own on
        # today's v3 codecs ("Unsupported codec: bytes"); none may come from the plugin.
        assert "Zarr3" not in r["stderr"] and "ZARR3" not in r["stderr"], detail
        return
    assert "ERROR" not in r["stderr"], detail


def zarr_json(path):
    return json.loads(Path(path).read_text())


def test_readme_outputs_are_what_the_examples_say(readme_run):
    work, results = readme_run
    # gdalinfo of the sample: the 365-band EPSG:4326 raster the comment promises, from the plugin.
    info = next(r for i, r in results.items() if "gdalinfo_nomd_data" in i)
    assert info["stdout"].startswith("Driver: Zarr3/") and "Band 365 " in info["stdout"], info["stdout"][:500]
    assert 'ID["EPSG",4326]' in info["stdout"]
    assert "Description = time=2023-07-15" in info["stdout"]  # the bands are dates
    mdd = next(r for i, r in results.items() if "mdd_ZARR3" in i)
    assert "CHUNK_GRID=" in mdd["stdout"] and '"rectilinear"' in mdd["stdout"], mdd["stdout"]
    # Rectilinear rows 12 + 20, sharded with 4 x 32 inner chunks, zstd inside.
    meta = zarr_json(work / "out.zarr" / "out" / "zarr.json")
    assert meta["chunk_grid"]["name"] == "rectilinear"
    assert meta["chunk_grid"]["configuration"]["chunk_shapes"] == [[12, 20], [64]]
    shard = meta["codecs"][0]
    assert shard["name"] == "sharding_indexed" and shard["configuration"]["chunk_shape"] == [4, 32]
    assert "zstd" in [c["name"] for c in shard["configuration"]["codecs"]]
    # Values: out.zarr holds day 196 of the sample.
    # (datasets kept in variables: a band outliving its dataset crashes GDAL 3.6's bindings)
    sample = gdal.Open(str(work / "data" / "daily_t2m_2023.zarr"))
    out = gdal.Open(str(work / "out.zarr"))
    assert out.GetDriver().ShortName == "Zarr3"
    assert out.GetRasterBand(1).ReadRaster() == sample.GetRasterBand(196).ReadRaster()
    assert gdal.Open(str(work / "t2m.tif")).RasterCount == 365
    warped = gdal.Open(str(work / "warped.tif"))
    assert warped.GetSpatialRef().GetAuthorityCode(None) == "3857"
    # gdalmdimtranslate: the 3-D array rechunked, the coordinate arrays all copied.
    for name in ("t2m", "lat", "lon", "time", "spatial_ref"):
        assert (work / "regular.zarr" / name / "zarr.json").exists(), name
    t2m = zarr_json(work / "regular.zarr" / "t2m" / "zarr.json")
    assert t2m["chunk_grid"] == {"name": "regular", "configuration": {"chunk_shape": [30, 32, 64]}}
    assert zarr_json(work / "regular.zarr" / "lat" / "zarr.json")["shape"] == [32]
    # make demo (scripts/demo.sh) wrote the colour map it names at the end.
    demo = next(r for i, r in results.items() if i.endswith("make_demo"))
    png = work / "demo" / "t2m_july_mean.png"
    assert str(png) in demo["stdout"].splitlines()[-2], demo["stdout"][-500:]
    ds = gdal.Open(str(png))
    assert ds.GetDriver().ShortName == "PNG" and ds.RasterCount == 3 and (ds.RasterXSize, ds.RasterYSize) == (512, 256)
    rgb = ds.ReadAsArray()
    assert len({tuple(px) for px in rgb.reshape(3, -1).T}) > 20  # a colour ramp, not one flat colour
    assert len(demo["stdout"].splitlines()) < 120  # readable: not thousands of gdalinfo lines
    # Its Icechunk step opens a snapshot by the id zarr3 log printed (February's: 59 days).
    log_ids = re.findall(r"^    ([0-9A-Z]{20})  \S+  February 2023 appended", demo["stdout"], re.M)
    assert len(log_ids) == 1, demo["stdout"]
    assert re.search(rf"^    gdalinfo -oo SNAPSHOT={log_ids[0]} data/t2m_2023q1.icechunk +59 bands "
                     r"\(February 2023 appended\)$", demo["stdout"], re.M), demo["stdout"]
    # make install: the plugin lands in GDAL's plugin folder under DESTDIR.
    if (Path(os.environ["GDAL_DRIVER_PATH"]) / "cmake_install.cmake").exists():
        installed = list((work / "destdir").rglob("gdal_Zarr3.so"))
        assert len(installed) == 1 and installed[0].parent.name == "gdalplugins", installed
    # Precedence off: GDAL's built-in driver for the plain name, the plugin for ZARR3:.
    prec = [r for i, r in results.items() if "ZARR3_PRECEDENCE" in i]
    assert [json.loads(r["stdout"])["driver"] for r in prec] == ["Zarr", "Zarr3"]
    # The Python example read July.
    py = next(r for i, r in results.items() if i.endswith("-python"))
    assert "july mean" in py["stdout"]
    # zarr3 virtualize (issue 42): 90 days from the 3 files, read like the netCDF driver; the repeated
    # files refused on --append; the relocated sample reads without /tmp/gdal-zarr3-archive.
    virt = [r for r in results.values() if r["ran"] and ("months.icechunk" in r["ran"] or "sample.icechunk" in r["ran"])]
    outs = [r["stdout"].strip() for r in virt]
    assert "3 file(s), 1 virtual array(s) (t2m): 12 chunk reference(s), 0 chunk(s) copied" in outs[0], outs
    assert outs[1:3] == ["90", "261.375"] and outs[3] == "refused", outs
    assert "is before the last time of the repository's time coordinate, 2023-03-31" in virt[3]["stderr"]
    assert "t2m_2023-01.nc" in virt[3]["stderr"], virt[3]["stderr"]
    # the sample, written as make_samples.sh writes data/archive.icechunk, then relocated
    assert "12 chunk reference(s), 0 chunk(s) copied" in outs[4] and "--no-checksum" in outs[4], outs
    assert "12 reference(s) moved" in outs[5] and outs[6] == "261.375", outs


def test_demo_removes_only_the_archive_files_it_copied(driver_path, tmp_path):
    """scripts/demo.sh copies the monthly .nc files of data/archive.icechunk where its virtual references
    point (/tmp/gdal-zarr3-archive) and removes afterwards only what it copied: a file already there (from
    README's worked example) stays as it was, and one that differs from data/archive/ is not overwritten
    (the demo fails, naming it)."""
    import filecmp

    from icechunk_samples import ARCHIVE_DIR, DATA

    if ARCHIVE_DIR.exists():
        pytest.skip(f"{ARCHIVE_DIR} exists (another run's, or the user's): not touched by this test")
    env = dict(os.environ, GDAL_DRIVER_PATH=driver_path, DEMO_OUT=str(tmp_path / "demo"))
    demo = ["bash", str(REPO / "scripts" / "demo.sh"), driver_path]
    ARCHIVE_DIR.mkdir()
    try:
        kept = ARCHIVE_DIR / "t2m_2023-02.nc"
        shutil.copy(DATA / "archive" / kept.name, kept)
        os.utime(kept, ns=(10**18, 10**18))
        p = subprocess.run(demo, env=env, capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
        assert sorted(f.name for f in ARCHIVE_DIR.iterdir()) == [kept.name]
        assert "1 already there, kept" in p.stdout and "removed the 2 file(s) copied" in p.stdout, p.stdout[-3000:]
        assert kept.stat().st_mtime_ns == 10**18 and filecmp.cmp(kept, DATA / "archive" / kept.name, shallow=False)
        kept.write_bytes(b"not the sample")
        p = subprocess.run(demo, env=env, capture_output=True, text=True, timeout=600)
        assert p.returncode != 0, p.stdout[-3000:]
        assert f"{kept} exists and differs from data/archive/{kept.name}: not overwritten" in p.stdout, p.stdout[-3000:]
        assert sorted(f.name for f in ARCHIVE_DIR.iterdir()) == [kept.name] and kept.read_bytes() == b"not the sample"
    finally:
        shutil.rmtree(ARCHIVE_DIR, ignore_errors=True)


def github_anchor(heading):
    """The anchor GitHub gives a heading: lower case, punctuation but '-' and '_' dropped,
    spaces turned into '-'."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_every_readme_internal_link_names_a_heading():
    """Issue 41: a link to #icechunk-repositories-and-virtual-archives-read pointed at no heading."""
    text = FENCE.sub("", README.read_text())
    anchors = {github_anchor(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.M)}
    links = re.findall(r"\]\(#([^)\s]+)\)", text)
    assert links, "the README has internal links"
    missing = sorted(set(links) - anchors)
    assert not missing, f"README links to missing headings: {missing}"
