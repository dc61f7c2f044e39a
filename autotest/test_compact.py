"""The zarr3 command-line tool: `compact` regroups the time axis (monthly, N, JSON edges) keeping every
value, with a killed compaction (ZARR3_TEST_KILL_AT) leaving the old or the new array whole; `info`
prints the grid in run-length form; `verify` finds corrupt chunks and names them."""
import json
import os
import subprocess

import numpy as np
import pytest
from osgeo import gdal

from test_append import (append_options, build_cube, day_tif, days_of, expected_day, meta, read_cube,
                         read_time)

DRV = "Zarr3"


def cli(exe, *args, kill_at=None):
    env = dict(os.environ)
    env.pop("ZARR3_TEST_KILL_AT", None)
    if kill_at:
        env["ZARR3_TEST_KILL_AT"] = kill_at
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=120,
                          env=env)


def chunk_files(array_dir):
    return sorted(str(p.relative_to(array_dir)) for p in array_dir.rglob("*")
                  if p.is_file() and p.name != "zarr.json")


def check_values(store, days=40):
    data, bands = read_cube(store)
    assert bands == days
    for d in range(1, days + 1):
        np.testing.assert_array_equal(data[d - 1], expected_day(d))
    assert read_time(store).tolist() == [days_of(d) for d in range(1, days + 1)]


@pytest.fixture
def cube(tmp_path, run_tool):
    return build_cube(tmp_path, run_tool, 40)  # 2024-01-01 .. 2024-02-09


def test_compact_monthly_keeps_every_value(cube, exe):
    p = cli(exe, "compact", cube / "cube", "--dim", "time", "--edges", "monthly")
    assert p.returncode == 0, p.stderr
    assert "axis 0 (time) 1 -> [31,9]; 40 chunks -> 2" in p.stdout
    m = meta(cube, "cube")
    assert m["chunk_grid"]["configuration"]["chunk_shapes"] == [[31, 9], [10], [20]]
    assert m["chunk_key_encoding"]["configuration"]["separator"] == "."
    assert chunk_files(cube / "cube") == ["c.0.0.0", "c.1.0.0"]  # old chunks and folders gone
    check_values(cube)
    # Appends go on after a compaction, in the new key namespace.
    gdal.Translate(str(cube), str(cube.parent / "d1.tif"), format=DRV,
                   creationOptions=append_options("APPEND_COORD=2024-02-10"))
    m = meta(cube, "cube")
    assert m["chunk_grid"]["configuration"]["chunk_shapes"][0] == [31, 9, 1]
    assert "c.2.0.0" in chunk_files(cube / "cube")


def test_compact_fixed_and_json_edges(cube, exe):
    p = cli(exe, "compact", cube / "cube", "--dim", "time", "--edges", "7")
    assert p.returncode == 0, p.stderr
    assert meta(cube, "cube")["chunk_grid"]["configuration"]["chunk_shapes"][0] == [[7, 6]]
    assert len(chunk_files(cube / "cube")) == 6
    check_values(cube)
    p = cli(exe, "compact", cube / "cube", "--dim", "time", "--edges", "[[10,3],5,5]")
    assert p.returncode == 0, p.stderr
    m = meta(cube, "cube")
    assert m["chunk_grid"]["configuration"]["chunk_shapes"][0] == [[10, 3], [5, 2]]
    assert m["chunk_key_encoding"]["configuration"]["separator"] == "/"
    assert chunk_files(cube / "cube") == sorted(f"c/{i}/0/0" for i in range(5))
    check_values(cube)
    p = cli(exe, "compact", cube / "cube", "--dim", "time", "--edges", "[10,10]")
    assert p.returncode == 1 and "edges of axis 0 sum to 20, short of the array length 40" in p.stderr


@pytest.mark.parametrize("step", ["compact-chunks", "compact-meta"])
def test_killed_compaction_leaves_old_or_new_array(cube, exe, step):
    before = meta(cube, "cube")
    p = cli(exe, "compact", cube / "cube", "--dim", "time", "--edges", "monthly", kill_at=step)
    assert p.returncode == -9, (p.returncode, p.stderr)
    m = meta(cube, "cube")
    if step == "compact-chunks":
        assert m == before  # the old array, whole
    else:
        assert m["chunk_grid"]["configuration"]["chunk_shapes"][0] == [31, 9]
    check_values(cube)
    # A later compaction clears what the killed one left and ends clean.
    p = cli(exe, "compact", cube / "cube", "--dim", "time", "--edges", "10")
    assert p.returncode == 0, p.stderr
    check_values(cube)
    files = chunk_files(cube / "cube")
    sep = meta(cube, "cube")["chunk_key_encoding"]["configuration"]["separator"]
    assert len(files) == 4 and all(f.startswith("c" + sep) for f in files), files


def store_state(store):
    """Every file of the store with its bytes, inode and mtime."""
    return {str(p.relative_to(store)): (p.read_bytes(), p.stat().st_ino, p.stat().st_mtime_ns)
            for p in sorted(store.rglob("*")) if p.is_file()}


def test_compact_monthly_refuses_an_unsorted_time_axis_and_writes_nothing(tmp_path, exe):
    store = tmp_path / "cube.zarr"
    for d in (1, 32, 2, 33):  # 2024-01-01, 02-01, 01-02, 02-02
        gdal.Translate(str(store), str(day_tif(tmp_path / f"d{d}.tif", d)), format=DRV,
                       creationOptions=append_options("APPEND_ORDER=ANY"))
    before = store_state(store)
    p = cli(exe, "compact", store / "cube", "--dim", "time", "--edges", "monthly")
    assert p.returncode != 0, p.stdout
    assert "value 2 (2024-01-02) comes after value 1 (2024-02-01)" in p.stderr, p.stderr
    assert "time" in p.stderr and "nothing was compacted" in p.stderr
    assert store_state(store) == before


def test_compact_rewrites_only_the_months_whose_edges_change(tmp_path, run_tool, exe):
    store = build_cube(tmp_path, run_tool, 59)  # 2024-01-01 .. 2024-02-28, daily
    p = cli(exe, "compact", store / "cube", "--dim", "time", "--edges", "[31,[1,28]]")
    assert p.returncode == 0, p.stderr  # January is one chunk, February still daily
    january = (store / "cube" / "c.0.0.0").stat()
    p = cli(exe, "compact", store / "cube", "--dim", "time", "--edges", "monthly")
    assert p.returncode == 0, p.stderr
    assert "[31,[1,28]] -> [31,28]; 29 chunks -> 2 (1 written, 1 kept as stored)" in p.stdout
    assert chunk_files(store / "cube") == ["c/0/0/0", "c/1/0/0"]
    kept = (store / "cube" / "c" / "0" / "0" / "0").stat()
    assert (kept.st_ino, kept.st_mtime_ns) == (january.st_ino, january.st_mtime_ns)
    check_values(store, 59)
    # Nothing left to do: said so, nothing written.
    before = store_state(store)
    p = cli(exe, "compact", store / "cube", "--dim", "time", "--edges", "monthly")
    assert p.returncode == 0, p.stderr
    assert "already has these edges ([31,28]); nothing to do, nothing written" in p.stdout
    assert store_state(store) == before


def test_info_prints_the_grid_in_run_length_form(tmp_path, run_tool, exe):
    store = build_cube(tmp_path, run_tool, 5)
    p = cli(exe, "info", store / "cube")
    assert p.returncode == 0, p.stderr
    assert "shape       [5, 10, 20]" in p.stdout
    # Five one-day appends keep the grid regular (issue 40.4).
    assert 'chunk_grid  regular {"chunk_shape":[1,10,20]}' in p.stdout, p.stdout
    assert "dimensions  time, y, x" in p.stdout and "codecs      bytes, zstd" in p.stdout
    sharded = tmp_path / "sh.zarr"
    gdal.Translate(str(sharded), str(tmp_path / "d1.tif"), format=DRV,
                   creationOptions=["SHARD_CHUNK_SHAPE=5,10"])
    p = cli(exe, "info", sharded)
    assert p.returncode == 0, p.stderr
    assert "shards      inner chunks [5, 10], index at end" in p.stdout
    assert "index     bytes, crc32c" in p.stdout


def test_verify_names_the_corrupt_chunk(tmp_path, exe):
    store = tmp_path / "v.zarr"
    src = tmp_path / "src.tif"
    ds = gdal.GetDriverByName("GTiff").Create(str(src), 20, 10, 1, gdal.GDT_Float32)
    ds.GetRasterBand(1).WriteArray(np.arange(200, dtype=np.float32).reshape(10, 20))
    ds = None
    gdal.Translate(str(store), str(src), format=DRV, creationOptions=["SHARD_CHUNK_SHAPE=5,10"])
    p = cli(exe, "verify", store)
    assert p.returncode == 0 and "every stored chunk reads" in p.stdout, p.stderr
    shard = store / "v" / "c" / "0" / "0"
    raw = bytearray(shard.read_bytes())
    raw[-8] ^= 0xFF  # inside the shard index (crc32c protected)
    shard.write_bytes(bytes(raw))
    p = cli(exe, "verify", store)
    assert p.returncode == 1
    assert "v/c/0/0:" in p.stderr and "1 bad chunk(s)" in p.stderr, p.stderr


def test_object_store_paths_are_refused_with_the_reason(exe):
    p = cli(exe, "compact", "/vsis3/bucket/cube.zarr/cube", "--dim", "time", "--edges", "7")
    assert p.returncode == 1 and "works on local folders only" in p.stderr
    p = cli(exe, "compact")
    assert p.returncode == 2 and "usage: zarr3" in p.stderr


def consolidate(store):
    """Inline consolidated metadata in the root zarr.json, as zarr-python's consolidate_metadata."""
    root = json.loads((store / "zarr.json").read_text())
    nodes = {p.parent.relative_to(store).as_posix(): json.loads(p.read_text())
             for p in store.glob("*/zarr.json")}
    root["consolidated_metadata"] = {"kind": "inline", "must_understand": False, "metadata": nodes}
    (store / "zarr.json").write_text(json.dumps(root))


def test_consolidated_metadata_follows_appends_and_compaction(tmp_path, run_tool, exe):
    store = build_cube(tmp_path, run_tool, 3)
    consolidate(store)
    gdal.Translate(str(store), str(tmp_path / "d1.tif"), format=DRV,
                   creationOptions=append_options("APPEND_COORD=2024-01-04"))
    cm = json.loads((store / "zarr.json").read_text())["consolidated_metadata"]["metadata"]
    assert cm["cube"]["shape"] == [4, 10, 20] and cm["time"]["shape"] == [4]
    assert cm["cube"] == meta(store, "cube")
    p = cli(exe, "compact", store / "cube", "--dim", "time", "--edges", "2")
    assert p.returncode == 0, p.stderr
    cm = json.loads((store / "zarr.json").read_text())["consolidated_metadata"]["metadata"]
    assert cm["cube"] == meta(store, "cube")
    assert cm["cube"]["chunk_grid"]["configuration"]["chunk_shapes"][0] == [[2, 2]]
    assert gdal.Open(str(store)).RasterCount == 4


def test_verify_reports_chunks_left_past_the_end(tmp_path, run_tool, exe):
    """A killed append leaves its chunk c/3/0/0 beyond the array's end (the array still has 3
    steps): verify names it instead of saying every chunk reads; the next append overwrites it."""
    from test_append import append, build_cube, day_tif
    store = build_cube(tmp_path, run_tool, 3)
    p = append(run_tool, day_tif(tmp_path / "d4.tif", 4), store, env_extra={"ZARR3_TEST_KILL_AT": "append-chunks"})
    assert p.returncode == -9, p.stderr
    assert (store / "cube" / "c" / "3" / "0" / "0").is_file()
    p = cli(exe, "verify", store)
    assert p.returncode == 1, p.stdout
    assert "every stored chunk reads" not in p.stdout
    assert "cube/c/3/0/0: stored chunk outside the array's extent (shape [3,10,20])" in p.stderr, p.stderr
    assert "1 chunk(s) outside the extent" in p.stderr and "bad chunk" not in p.stderr
    assert append(run_tool, day_tif(tmp_path / "d4b.tif", 4), store).returncode == 0
    p = cli(exe, "verify", store)
    assert p.returncode == 0 and "every stored chunk reads, none lies outside the extent" in p.stdout, p.stderr
