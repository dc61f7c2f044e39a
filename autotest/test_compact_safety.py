"""`zarr3 compact` and `verify` never lose data (issue 33): v2 chunk keys survive (#1), a dataset opened
before a compaction errors instead of reading the fill value (#7), loops are bounded by the stored
extent (#8), compaction deletes only its own chunk keys and never goes through symbolic links, and
bad numbers name their option."""
import json
import subprocess
import uuid

import numpy as np
import pytest
from osgeo import gdal

from test_append import build_cube, expected_day, meta
from nginx_fixture import nginx  # noqa: F401  (session fixture)
from test_compact import cli


def write_array(store, sep, enc="v2", shape=(6, 2, 3), chunk_shapes=None):
    """A group holding int32 array "cube" (time, y, x), one uncompressed chunk per time step."""
    store.mkdir()
    (store / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group"}))
    arr = store / "cube"
    arr.mkdir()
    grid = ({"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": chunk_shapes}}
            if chunk_shapes else
            {"name": "regular", "configuration": {"chunk_shape": [1, *shape[1:]]}})
    (arr / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": "int32",
        "chunk_grid": grid, "fill_value": 0,
        "chunk_key_encoding": {"name": enc, "configuration": {"separator": sep}},
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "dimension_names": ["time", "y", "x"]}))
    values = np.arange(1, np.prod(shape) + 1, dtype="<i4").reshape(shape)
    for t in range(shape[0]):
        parts = ([] if enc == "v2" else ["c"]) + [str(t), "0", "0"]
        key = arr / sep.join(parts)
        key.parent.mkdir(parents=True, exist_ok=True)
        key.write_bytes(values[t].tobytes())
    return values


def read_md(store):
    ds = gdal.OpenEx(str(store), gdal.OF_MULTIDIM_RASTER)
    return ds.GetRootGroup().OpenMDArray("cube").ReadAsArray()


@pytest.mark.parametrize("sep", [".", "/"])
def test_v2_chunk_keys_survive_compaction(tmp_path, exe, sep):  # noqa: F811
    store = tmp_path / "v2.zarr"
    values = write_array(store, sep)
    p = cli(exe, "compact", store / "cube", "--dim", "time", "--edges", "4")
    assert p.returncode == 0, p.stderr
    other = "/" if sep == "." else "."
    assert meta(store, "cube")["chunk_key_encoding"]["configuration"]["separator"] == other
    np.testing.assert_array_equal(read_md(store), values)
    p = cli(exe, "compact", store / "cube", "--dim", "time", "--edges", "[2,2,2]")
    assert p.returncode == 0, p.stderr
    np.testing.assert_array_equal(read_md(store), values)
    files = sorted(str(f.relative_to(store / "cube")) for f in (store / "cube").rglob("*") if f.is_file())
    assert files == [f"{t}{sep}0{sep}0" for t in range(3)] + ["zarr.json"]


def test_compaction_leaves_what_is_not_its_own(tmp_path, exe):  # noqa: F811
    store = tmp_path / "own.zarr"
    values = write_array(store, "/", enc="default")
    arr = store / "cube"
    foreign = {"notes.txt": b"keep", "0/data": b"keep", "c/0/0/extra": b"keep", "c/9/0/0": b"keep",
               "c.x.0.0": b"keep", "c/00/0/0": b"keep"}
    for k, v in foreign.items():
        (arr / k).parent.mkdir(parents=True, exist_ok=True)
        (arr / k).write_bytes(v)
    p = cli(exe, "compact", arr, "--dim", "time", "--edges", "3")
    assert p.returncode == 0, p.stderr
    for k in foreign:  # c/9/0/0 lies past the 6-step grid: not a chunk of the old array
        assert (arr / k).read_bytes() == b"keep", k
    np.testing.assert_array_equal(read_md(store), values)


def test_compaction_never_goes_through_a_symbolic_link(tmp_path, exe):  # noqa: F811
    store = tmp_path / "link.zarr"
    values = write_array(store, "/", enc="default")
    outside = tmp_path / "outside"
    (outside / "0" / "0").mkdir(parents=True)
    (outside / "0" / "0" / "0").write_bytes(b"precious")
    arr = store / "cube"
    (arr / "c" / "5").rename(tmp_path / "moved5")
    (arr / "c" / "5").symlink_to(outside)  # a chunk folder that is a link out of the store
    before = meta(store, "cube")
    p = cli(exe, "compact", arr, "--dim", "time", "--edges", "3")
    assert p.returncode == 1 and "symbolic link" in p.stderr and "c/5" in p.stderr, p.stderr
    assert (outside / "0" / "0" / "0").read_bytes() == b"precious"
    assert meta(store, "cube") == before
    assert (arr / "c" / "0" / "0" / "0").read_bytes() == values[0].tobytes()
    # A link where the new chunks go (c.0.0.0) is refused the same way.
    (arr / "c" / "5").unlink()
    (tmp_path / "moved5").rename(arr / "c" / "5")
    (arr / "c.0.0.0").symlink_to(outside / "0" / "0" / "0")
    p = cli(exe, "compact", arr, "--dim", "time", "--edges", "3")
    assert p.returncode == 1 and "c.0.0.0: a symbolic link" in p.stderr, p.stderr
    assert (outside / "0" / "0" / "0").read_bytes() == b"precious"


@pytest.mark.parametrize("where", ["local", "http"])
@pytest.mark.parametrize("mode", ["classic", "multidim"])
def test_dataset_open_across_a_compaction_errors_instead_of_fill(tmp_path, run_tool, exe,  # noqa: F811
                                                                 mode, where, request):
    """Also over HTTP, where a read is not followed by a look at zarr.json: a read that finds
    a chunk absent (the old chunks were removed by the switch) asks for zarr.json anew, past
    every cache, instead of returning the fill value."""
    if where == "http":
        server = request.getfixturevalue("nginx")
        top = server.root / uuid.uuid4().hex
        top.mkdir()
        store = build_cube(top, run_tool, 6)
        name = f"/vsicurl/{server.url}/{top.name}/{store.name}"
    else:
        store = build_cube(tmp_path, run_tool, 6)
        name = str(store)
    if mode == "classic":
        # Over HTTP (no folder listing) the classic view is opened at the array.
        ds = gdal.Open(name if where == "local" else f'ZARR3:"{name}":/cube')
        np.testing.assert_array_equal(ds.GetRasterBand(1).ReadAsArray(), expected_day(1))
        read_after = lambda: ds.GetRasterBand(2).ReadAsArray()  # noqa: E731 (not in the block cache)
    else:
        ds = gdal.OpenEx(name, gdal.OF_MULTIDIM_RASTER)
        a = ds.GetRootGroup().OpenMDArray("cube")
        np.testing.assert_array_equal(a.ReadAsArray(array_start_idx=[0, 0, 0], count=[1, 10, 20])[0],
                                      expected_day(1))
        read_after = lambda: a.ReadAsArray(array_start_idx=[1, 0, 0], count=[1, 10, 20])  # noqa: E731
    p = cli(exe, "compact", store / "cube", "--dim", "time", "--edges", "3")
    assert p.returncode == 0, p.stderr
    with pytest.raises(RuntimeError, match="changed since it was opened.*reopen it"):
        read_after()
    ds = gdal.Open(str(store))  # reopened: the new array
    np.testing.assert_array_equal(ds.GetRasterBand(2).ReadAsArray(), expected_day(2))


def test_verify_and_compact_are_bounded_by_the_stored_extent(tmp_path, exe):  # noqa: F811
    store = tmp_path / "tail.zarr"
    values = write_array(store, "/", enc="default", shape=(10, 2, 3),
                         chunk_shapes=[[[1, 10], [1, 1000000000000]], 2, 3])
    p = cli(exe, "verify", store)
    assert p.returncode == 0 and "every stored chunk reads" in p.stdout, p.stderr
    p = cli(exe, "compact", store / "cube", "--dim", "time", "--edges", "[[5,1000000000000]]")
    assert p.returncode == 0, p.stderr
    assert "10 chunks -> 2" in p.stdout
    np.testing.assert_array_equal(read_md(store), values)


@pytest.mark.parametrize("opt,value", [("--edges", "99999999999999999999"), ("--edges", "0"),
                                       ("--dim", "99999999999999999999")])
def test_bad_numbers_name_their_option(tmp_path, exe, opt, value):  # noqa: F811
    store = tmp_path / "n.zarr"
    write_array(store, "/", enc="default")
    args = {"--dim": "time", "--edges": "3", opt: value}
    p = cli(exe, "compact", store / "cube", *[x for kv in args.items() for x in kv])
    assert p.returncode == 1, p.stderr
    assert opt in p.stderr and "stoull" not in p.stderr, p.stderr


def test_killed_compactions_leave_a_readable_array(tmp_path, exe):  # noqa: F811
    """v2 keys at every kill point: the old or the new array, whole."""
    store = tmp_path / "k.zarr"
    values = write_array(store, ".")
    for step in ("compact-chunks", "compact-meta"):
        p = cli(exe, "compact", store / "cube", "--dim", "time", "--edges", "4", kill_at=step)
        assert p.returncode == -9, p.stderr
        np.testing.assert_array_equal(read_md(store), values)
    p = subprocess.run([str(exe), "verify", str(store)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr


def test_kept_chunks_are_never_linked_through_a_planted_folder_link(tmp_path, exe):  # noqa: F811
    """Chunks whose extent does not change are hard-linked to their new key (c.2.0.0 -> c/1/0/0):
    a folder link planted where the new keys go (c -> outside) must not receive them."""
    store = tmp_path / "planted.zarr"
    values = write_array(store, ".", enc="default")
    arr = store / "cube"
    outside = tmp_path / "outside"
    outside.mkdir()
    (arr / "c").symlink_to(outside)
    before = meta(store, "cube")
    p = cli(exe, "compact", arr, "--dim", "time", "--edges", "[2,[1,4]]")
    assert p.returncode == 1 and "symbolic link" in p.stderr, p.stderr
    assert list(outside.rglob("*")) == []
    assert meta(store, "cube") == before
    np.testing.assert_array_equal(read_md(store), values)
    # Without the link the same compaction keeps four of the five chunks as stored.
    (arr / "c").unlink()
    p = cli(exe, "compact", arr, "--dim", "time", "--edges", "[2,[1,4]]")
    assert p.returncode == 0, p.stderr
    assert "4 kept as stored" in p.stdout, p.stdout
    np.testing.assert_array_equal(read_md(store), values)
