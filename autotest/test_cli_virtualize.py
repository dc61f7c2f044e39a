"""zarr3 virtualize (issue 42): an Icechunk repository whose arrays reference the HDF5 chunks of
NetCDF-4 files in place, read through GDAL + the plugin and compared with GDAL's netCDF driver on the
same files.

The files (4 months of 31/28/31/30 days: packed int16, shuffle + deflate, chunks that do not divide
the month) are written by virtual_months.py.
"""
import os
import shutil

import numpy as np
import pytest
from osgeo import gdal

import h5py  # python3-h5py (scripts/install-deps.sh): a compact dataset, which netCDF4 cannot write
import netCDF4  # python3-netcdf4 (scripts/install-deps.sh)
from virtual_months import MONTHS, NLAT, TP_CHUNK, netcdf_values, run, virtualize, write_month, write_months


@pytest.fixture
def months(tmp_path):
    return write_months(tmp_path / "nc")


def zarr_array_json(repo, var):
    ds = gdal.OpenEx(f"ICECHUNK:{repo}", gdal.OF_MULTIDIM_RASTER)
    return ds.GetRootGroup().OpenMDArray(var)


def test_virtualize_reads_like_the_netcdf_driver(exe, months, tmp_path):
    repo = tmp_path / "v.icechunk"
    virtualize(exe, repo, months)
    first = gdal.Open(f'NETCDF:"{months[0]}":t2m')
    for var in ("t2m", "sp", "tp"):
        ds = gdal.Open(f'ZARR3:"{repo}":/{var}')
        assert ds is not None, var
        nc = gdal.Open(f'NETCDF:"{months[0]}":{var}')
        np.testing.assert_array_equal(ds.ReadAsArray(), netcdf_values(months, var), err_msg=var)
        assert ds.GetGeoTransform() == pytest.approx(nc.GetGeoTransform()), var
        assert ds.GetSpatialRef().IsSame(nc.GetSpatialRef()), var
        b, nb = ds.GetRasterBand(1), nc.GetRasterBand(1)
        assert b.GetNoDataValue() == nb.GetNoDataValue(), var
        assert (b.GetScale(), b.GetOffset()) == (nb.GetScale(), nb.GetOffset()), var
        assert b.GetUnitType() == nb.GetUnitType(), var
    assert first.RasterCount == 31


def test_virtualize_dates_in_one_unit(exe, months, tmp_path):
    """Each file's 'hours since <its month>' is converted to the first file's unit; every band's date
    equals the netCDF driver's date of the same day."""
    repo = tmp_path / "v.icechunk"
    virtualize(exe, repo, months)
    ds = gdal.Open(f'ZARR3:"{repo}":/t2m')
    assert ds.RasterCount == sum(n for _, n in MONTHS)
    band = 1
    for f in months:
        nc = gdal.Open(f'NETCDF:"{f}":t2m')
        units = nc.GetMetadataItem("time#units")
        month_start = np.datetime64(units.split("since ")[1].strip()[:10])
        for i in range(nc.RasterCount):
            hours = float(nc.GetRasterBand(i + 1).GetMetadataItem("NETCDF_DIM_time"))
            want = month_start + np.timedelta64(int(hours), "h")
            md = ds.GetRasterBand(band).GetMetadata()
            assert md["time#units"] == "hours since 2023-01-01"
            got = np.datetime64("2023-01-01") + np.timedelta64(int(float(md["NETCDF_DIM_time"])), "h")
            assert got == want, (band, f)
            band += 1
    t = zarr_array_json(repo, "time").ReadAsArray()
    assert np.all(np.diff(t) == 24)


def test_virtualize_rectilinear_axis_and_summary(exe, months, tmp_path):
    repo = tmp_path / "v.icechunk"
    out = virtualize(exe, repo, months)
    arr = zarr_array_json(repo, "tp")
    assert arr.GetDimensions()[0].GetSize() == 120
    # expected from the files' layout: t2m one chunk per month x 2 x 2, sp one per month, tp chunks
    # of 10 days x 2 x 3, the last chunk of a month not divisible by 10 copied
    tp_chunks = sum(-(-n // TP_CHUNK) for _, n in MONTHS) * 2 * 3
    tp_copied = sum(1 for _, n in MONTHS if n % TP_CHUNK) * 2 * 3
    refs = 4 * 2 * 2 + 4 + tp_chunks - tp_copied
    assert f"{refs} chunk reference(s), {tp_copied} chunk(s) copied" in out, out
    assert "padded edge chunk" in out
    assert "stored natively: time" in out
    info = run(exe, "info", repo)
    assert info.returncode == 0, info.stderr
    # every chunk, referenced or copied, decodes through the array's codecs
    ver = run(exe, "verify", repo)
    assert ver.returncode == 0 and "7 array(s), every stored chunk reads" in ver.stdout, ver.stdout + ver.stderr
    # the repository holds coordinates and the few copied chunks: a small fraction of the files
    size = sum(p.stat().st_size for p in repo.rglob("*") if p.is_file())
    files = sum(p.stat().st_size for p in months)
    print(f"repository {size} bytes, the 4 files {files} bytes ({100 * size / files:.1f} %)")
    assert size < files / 5, (size, files)


def test_virtualize_time_chunks_are_the_months(exe, months, tmp_path):
    repo = tmp_path / "v.icechunk"
    virtualize(exe, repo, months)
    ds = gdal.OpenEx(f'ZARR3:"{repo}":/t2m')
    assert ds.GetRasterBand(1).GetBlockSize() == [32, 16]
    r = run(exe, "info", repo)
    assert r.returncode == 0, r.stderr
    assert "[31,28,31,30]" in r.stdout.replace(" ", ""), r.stdout


def test_virtualize_variables_option(exe, months, tmp_path):
    repo = tmp_path / "v.icechunk"
    out = virtualize(exe, repo, months, "--variables", "t2m")
    assert "1 virtual array(s) (t2m)" in out, out
    with pytest.raises(RuntimeError, match="sp/zarr.json: not found"):
        gdal.Open(f'ZARR3:"{repo}":/sp')
    r = run(exe, "virtualize", tmp_path / "w.icechunk", *months, "--concat-dim", "time",
            "--variables", "nope")
    assert r.returncode == 1 and "nope" in r.stderr, r.stderr
    assert not (tmp_path / "w.icechunk").exists()


def test_virtualize_refuses_mismatched_files_writing_nothing(exe, months, tmp_path):
    odd = tmp_path / "nc" / "t2m_2023-05.nc"
    write_month(odd, 5, 31, nlat=NLAT - 4)
    repo = tmp_path / "v.icechunk"
    r = run(exe, "virtualize", repo, *months, odd, "--concat-dim", "time")
    assert r.returncode == 1
    assert str(odd) in r.stderr and "shape" in r.stderr and "nothing written" in r.stderr, r.stderr
    assert not repo.exists()
    assert not list(tmp_path.glob("v.icechunk*"))


def test_virtualize_refuses_overlapping_times_naming_both_files(exe, months, tmp_path):
    again = tmp_path / "nc" / "again.nc"
    write_month(again, 4, 30, first_hour=0.0)  # days of April again
    repo = tmp_path / "v.icechunk"
    r = run(exe, "virtualize", repo, *months, again, "--concat-dim", "time")
    assert r.returncode == 1
    assert str(again) in r.stderr and str(months[3]) in r.stderr, r.stderr
    assert not repo.exists()


def test_virtualize_unknown_filter_is_copied(exe, tmp_path):
    """fletcher32 has no codec here: every chunk of that variable is decoded and stored natively."""
    d = tmp_path / "nc"
    d.mkdir()
    files = []
    for m, n in MONTHS[:2]:
        files.append(d / f"f{m}.nc")
        write_month(files[-1], m, n, fletcher32=True)
    repo = tmp_path / "v.icechunk"
    out = virtualize(exe, repo, files, "--variables", "t2m")
    assert "fletcher32" in out and "8 chunk(s) copied" in out, out
    np.testing.assert_array_equal(gdal.Open(f'ZARR3:"{repo}":/t2m').ReadAsArray(),
                                  netcdf_values(files, "t2m"))


def test_virtualize_contiguous_is_one_chunk_per_file(exe, tmp_path):
    d = tmp_path / "nc"
    d.mkdir()
    files = []
    for m, n in MONTHS:
        f = d / f"c{m}.nc"
        ds = netCDF4.Dataset(str(f), "w", format="NETCDF4")
        ds.createDimension("time", n)
        ds.createDimension("x", 5)
        t = ds.createVariable("time", "i4", ("time",))
        t.units = "days since 2023-01-01"
        start = sum(k for _, k in MONTHS[: m - 1])
        t[:] = np.arange(start, start + n)
        v = ds.createVariable("v", "f8", ("time", "x"), contiguous=True)
        v[:] = np.arange(n * 5).reshape(n, 5) + 1000 * m
        ds.close()
        files.append(f)
    repo = tmp_path / "v.icechunk"
    out = virtualize(exe, repo, files)
    assert "4 chunk reference(s), 0 chunk(s) copied" in out, out
    got = gdal.OpenEx(f"ICECHUNK:{repo}", gdal.OF_MULTIDIM_RASTER).GetRootGroup().OpenMDArray("v").ReadAsArray()
    want = np.concatenate([netCDF4.Dataset(str(f))["v"][:] for f in files])
    np.testing.assert_array_equal(got, want)


def test_virtualize_refuses_remote_sources_and_existing_repositories(exe, months, tmp_path):
    r = run(exe, "virtualize", tmp_path / "r.icechunk", "/vsis3/bucket/a.nc", "--concat-dim", "time")
    assert r.returncode == 1 and "/vsis3/bucket/a.nc" in r.stderr and "remote" in r.stderr, r.stderr
    assert "gdal driver zarr3 virtualize" in r.stderr, r.stderr  # what reads them (GDAL >= 3.12)
    repo = tmp_path / "v.icechunk"
    virtualize(exe, repo, months)
    r = run(exe, "virtualize", repo, *months, "--concat-dim", "time")
    assert r.returncode == 1 and "--append" in r.stderr, r.stderr
    r = run(exe, "virtualize", tmp_path / "x.icechunk", tmp_path / "missing.nc", "--concat-dim", "time")
    assert r.returncode == 1 and "missing.nc" in r.stderr, r.stderr


# ------------------------------------------------------------------ --append (point 2)
def log_ids(exe, repo):
    r = run(exe, "log", repo)
    assert r.returncode == 0, r.stderr
    hist = r.stdout.split("history of branch main")[1].splitlines()[1:]
    return [line.split()[0] for line in hist if line.strip()]


def test_virtualize_append_is_one_commit_and_keeps_the_old_snapshot(exe, months, tmp_path):
    repo = tmp_path / "v.icechunk"
    virtualize(exe, repo, months)
    before = log_ids(exe, repo)
    old = {v: gdal.Open(f'ZARR3:"{repo}":/{v}').ReadAsArray() for v in ("t2m", "tp")}
    held = gdal.OpenEx(f'ZARR3:"{repo}":/tp', gdal.OF_RASTER)  # opened before the append
    may = tmp_path / "more" / "t2m_2023-05.nc"
    may.parent.mkdir()
    write_month(may, 5, 31)
    out = virtualize(exe, repo, [may], "--append")
    assert "1 file(s)" in out, out
    after = log_ids(exe, repo)
    assert after[1:] == before and len(after) == len(before) + 1
    files = months + [may]
    for v in ("t2m", "sp", "tp"):
        np.testing.assert_array_equal(gdal.Open(f'ZARR3:"{repo}":/{v}').ReadAsArray(),
                                      netcdf_values(files, v), err_msg=v)
    ds = gdal.Open(f'ZARR3:"{repo}":/t2m')
    assert ds.RasterCount == 151
    md = ds.GetRasterBand(151).GetMetadata()
    assert md["time#units"] == "hours since 2023-01-01"
    assert float(md["NETCDF_DIM_time"]) == (31 + 28 + 31 + 30 + 30) * 24 + 12
    # the snapshot before the append reads its 120 days unchanged
    for v in ("t2m", "tp"):
        snap = gdal.OpenEx(f'ZARR3:"{repo}":/{v}', gdal.OF_RASTER, open_options=[f"SNAPSHOT={before[0]}"])
        assert snap.RasterCount == 120
        np.testing.assert_array_equal(snap.ReadAsArray(), old[v], err_msg=v)
    np.testing.assert_array_equal(held.ReadAsArray(), old["tp"])


def test_virtualize_append_refuses_overlap_and_mismatch_writing_nothing(exe, months, tmp_path):
    repo = tmp_path / "v.icechunk"
    virtualize(exe, repo, months)
    before = log_ids(exe, repo)
    files_before = sorted(p.relative_to(repo) for p in repo.rglob("*"))
    again = tmp_path / "more" / "april.nc"
    again.parent.mkdir()
    write_month(again, 4, 30)
    r = run(exe, "virtualize", repo, again, "--concat-dim", "time", "--append")
    assert r.returncode == 1 and str(again) in r.stderr and "repository" in r.stderr, r.stderr
    odd = tmp_path / "more" / "odd.nc"
    write_month(odd, 5, 31, nlat=NLAT - 4)
    r = run(exe, "virtualize", repo, odd, "--concat-dim", "time", "--append")
    assert r.returncode == 1 and str(odd) in r.stderr and "nothing written" in r.stderr, r.stderr
    shifted = tmp_path / "more" / "shifted.nc"
    write_month(shifted, 5, 31)
    with netCDF4.Dataset(str(shifted), "a") as ds:
        ds["lat"][:] = ds["lat"][:] + 0.125
    r = run(exe, "virtualize", repo, shifted, "--concat-dim", "time", "--append")
    assert r.returncode == 1 and str(shifted) in r.stderr and "lat" in r.stderr, r.stderr
    assert log_ids(exe, repo) == before
    assert sorted(p.relative_to(repo) for p in repo.rglob("*")) == files_before


# ------------------------------------------------------------------ references, containers, relocation (point 3)
def test_virtualize_changed_file_fails_naming_it(exe, months, tmp_path):
    """References record each file's modification time: a file changed since fails the read."""
    repo = tmp_path / "v.icechunk"
    virtualize(exe, repo, months)
    st = months[1].stat()
    os.utime(months[1], (st.st_atime, st.st_mtime + 60))
    ds = gdal.Open(f'ZARR3:"{repo}":/t2m')
    with pytest.raises(RuntimeError, match=r"t2m_2023-02\.nc.*modified after the reference"):
        ds.ReadAsArray()


def test_virtualize_container_and_relocate(exe, months, tmp_path):
    """--container names the prefix where the files will be served; --relocate moves the references
    (one commit) when the archive moves; copies keep their modification times (cp -p)."""
    served = tmp_path / "served"
    repo = tmp_path / "v.icechunk"
    virtualize(exe, repo, months, "--container", f"file://{served}/")
    ds = gdal.Open(f'ZARR3:"{repo}":/t2m')
    with pytest.raises(RuntimeError, match="served/t2m_2023-01.nc"):
        ds.ReadAsArray()  # not there yet
    served.mkdir()
    for f in months:
        shutil.copy2(f, served / f.name)
    np.testing.assert_array_equal(gdal.Open(f'ZARR3:"{repo}":/t2m').ReadAsArray(),
                                  netcdf_values(months, "t2m"))
    moved = tmp_path / "moved"
    shutil.move(served, moved)
    before = log_ids(exe, repo)
    r = run(exe, "virtualize", repo, "--relocate", f"file://{served}/", f"file://{moved}/")
    assert r.returncode == 0, r.stderr
    refs = int(r.stdout.split(" reference(s) moved")[0].split()[-1])
    assert refs > 0
    assert log_ids(exe, repo)[1:] == before
    for v in ("t2m", "sp", "tp"):
        np.testing.assert_array_equal(gdal.Open(f'ZARR3:"{repo}":/{v}').ReadAsArray(),
                                      netcdf_values(months, v), err_msg=v)
    # the snapshot before still names the old folder
    old = gdal.OpenEx(f'ZARR3:"{repo}":/t2m', gdal.OF_RASTER, open_options=[f"SNAPSHOT={before[0]}"])
    with pytest.raises(RuntimeError, match="served/t2m_2023-01.nc"):
        old.ReadAsArray()
    r = run(exe, "virtualize", repo, "--relocate", "file:///nowhere/", f"file://{moved}/")
    assert r.returncode == 1 and "nothing written" in r.stderr, r.stderr
    assert len(log_ids(exe, repo)) == len(before) + 1


def test_virtualize_in_the_usage(exe):
    r = run(exe, "--help")
    assert r.returncode == 0 and "zarr3 virtualize REPO FILE... --concat-dim DIM" in r.stdout, r.stdout
    r = run(exe, "virtualize", "--help")
    assert r.returncode == 0 and "--relocate OLD_PREFIX NEW_PREFIX" in r.stdout, r.stdout
    r = run(exe, "virtualize", "r.icechunk", "a.nc")
    assert r.returncode == 2 and "--concat-dim DIM is required" in r.stderr, r.stderr


def test_virtualize_compact_dataset_is_copied(exe, tmp_path):
    """A compact dataset (data in the object header, no chunk to reference) is decoded and stored."""
    files = []
    for i, (start, n) in enumerate([(0, 4), (4, 3)]):
        files.append(tmp_path / f"c{i}.h5")
        with h5py.File(files[-1], "w") as f:
            t = f.create_dataset("time", data=np.arange(start, start + n, dtype="f8"))
            t.attrs["units"] = np.bytes_("days since 2023-01-01")
            t.make_scale("time")
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_layout(h5py.h5d.COMPACT)
            dsid = h5py.h5d.create(f.id, b"v", h5py.h5t.NATIVE_INT32, h5py.h5s.create_simple((n, 3)),
                                   dcpl=dcpl)
            v = h5py.Dataset(dsid)
            v[...] = np.arange(n * 3, dtype="i4").reshape(n, 3) + 100 * start
            v.dims[0].attach_scale(t)
    repo = tmp_path / "c.icechunk"
    out = virtualize(exe, repo, files)
    assert "0 chunk reference(s), 2 chunk(s) copied" in out and "compact HDF5 layout" in out, out
    ds = gdal.OpenEx(f"ICECHUNK:{repo}", gdal.OF_MULTIDIM_RASTER)
    got = ds.GetRootGroup().OpenMDArray("v").ReadAsArray()
    want = np.concatenate([np.arange(12).reshape(4, 3), np.arange(9).reshape(3, 3) + 400])
    np.testing.assert_array_equal(got, want)


def test_virtualize_refuses_classic_and_damaged_files_naming_them(exe, months, tmp_path):
    classic = tmp_path / "classic.nc"
    with netCDF4.Dataset(str(classic), "w", format="NETCDF3_CLASSIC") as ds:
        ds.createDimension("time", 2)
        ds.createVariable("v", "f4", ("time",))[:] = [1, 2]
    cut = tmp_path / "cut.nc"
    cut.write_bytes(months[0].read_bytes()[:60000])
    for f, why in ((classic, "not a NetCDF-4 (HDF5) file"), (cut, "libhdf5 cannot open the file")):
        r = run(exe, "virtualize", tmp_path / "x.icechunk", f, "--concat-dim", "time")
        assert r.returncode == 1 and f"{f}: {why}" in r.stderr, r.stderr
        assert not list(tmp_path.glob("x.icechunk*"))


def test_virtualize_no_checksum_reads_files_copied_without_their_times(exe, months, tmp_path):
    """--no-checksum: the references record no modification time, for files copied without their
    times (a git checkout of data/archive/, the sample's generator): a touched file still reads."""
    repo = tmp_path / "v.icechunk"
    out = virtualize(exe, repo, months, "--no-checksum")
    assert "no modification time recorded" in out, out
    st = months[1].stat()
    os.utime(months[1], (st.st_atime, st.st_mtime + 60))
    np.testing.assert_array_equal(gdal.Open(f'ZARR3:"{repo}":/t2m').ReadAsArray(),
                                  netcdf_values(months, "t2m"))
    more = tmp_path / "more" / "t2m_2023-05.nc"
    more.parent.mkdir()
    write_month(more, 5, 31)
    virtualize(exe, repo, [more], "--append", "--no-checksum")
    st = more.stat()
    os.utime(more, (st.st_atime, st.st_mtime + 60))
    assert gdal.Open(f'ZARR3:"{repo}":/t2m').ReadAsArray().shape[0] == 151


# ------------------------------------------------------------------ safety of containers and names (point 5)
@pytest.mark.parametrize("container", [
    "file:///data/../etc/", "file:///data/./x/", "file:///data//x/", "file:////data/", "file://data/",
    "file:///vsicurl/http://127.0.0.1:1/", "file:///vsimem/x/", "/vsis3/bucket/", "/data/",
    "s3://bucket/a/../b/", "file:///data?x=1/", "file:///data/%2e%2e/", "file:///data",
])
def test_virtualize_container_outside_what_was_named_is_refused(exe, months, tmp_path, container):
    """--container (and --relocate's NEW_PREFIX) is checked as the reader checks a reference: dot and
    empty segments, /vsi paths, relative file URLs, escapes and queries are refused, nothing written."""
    repo = tmp_path / "v.icechunk"
    r = run(exe, "virtualize", repo, *months, "--concat-dim", "time", "--container", container)
    assert r.returncode == 1 and container in r.stderr, r.stderr
    assert not list(tmp_path.glob("v.icechunk*"))
    good = tmp_path / "g.icechunk"
    virtualize(exe, good, months[:1])
    before = sorted(p.relative_to(good) for p in good.rglob("*"))
    r = run(exe, "virtualize", good, "--relocate", f"file://{months[0].parent}/", container)
    assert r.returncode == 1 and container in r.stderr, r.stderr
    assert sorted(p.relative_to(good) for p in good.rglob("*")) == before


def test_virtualize_container_is_where_the_references_point(exe, months, tmp_path):
    """A good container: every reference is the container + the file's path under the files' folder:
    --relocate from the container moves all of them, and they then read the files back equal."""
    repo = tmp_path / "v.icechunk"
    out = virtualize(exe, repo, months, "--container", "s3://bucket/era5/")
    refs = int(out.split(" chunk reference(s)")[0].split()[-1])
    r = run(exe, "virtualize", repo, "--relocate", "s3://bucket/era5/", f"file://{months[0].parent}/")
    assert r.returncode == 0 and f"{refs} reference(s) moved" in r.stdout, r.stdout + r.stderr
    for v in ("t2m", "sp", "tp"):
        np.testing.assert_array_equal(gdal.Open(f'ZARR3:"{repo}":/{v}').ReadAsArray(),
                                      netcdf_values(months, v), err_msg=v)


def raw_values(files, var):
    """The stored (packed) values as GDAL reads them, through netCDF4 (GDAL's NETCDF:"..." syntax cannot
    name a file whose name holds a double quote)."""
    out = []
    for f in files:
        with netCDF4.Dataset(str(f)) as ds:
            ds.set_auto_maskandscale(False)
            out.append(ds[var][:])
    return np.concatenate(out)


ODD_NAMES = ["a b.nc", "it's.nc", 'say "x".nc', "k=v&w=z.nc", "sp ace/&=.nc"]


def test_virtualize_odd_file_names_read_back_equal_and_relocate(exe, tmp_path):
    """File names with spaces, quotes, '&' and '=' (and a folder with them): the references name the
    files as they are, read back equal to the netCDF driver, before and after --relocate."""
    src = tmp_path / "odd dir&x=1"
    files = []
    for (m, n), name in zip(MONTHS, ODD_NAMES):
        f = src / f"{m}-{name}"
        f.parent.mkdir(parents=True, exist_ok=True)
        write_month(f, m, n)
        files.append(f)
    repo = tmp_path / "v.icechunk"
    out = virtualize(exe, repo, files)
    refs = int(out.split(" chunk reference(s)")[0].split()[-1])
    for v in ("t2m", "sp", "tp"):
        np.testing.assert_array_equal(gdal.Open(f'ZARR3:"{repo}":/{v}').ReadAsArray(),
                                      raw_values(files, v), err_msg=v)
    moved = tmp_path / "moved 'it' & more"
    shutil.move(src, moved)
    r = run(exe, "virtualize", repo, "--relocate", f"file://{src}/", f"file://{moved}/")
    assert r.returncode == 0 and f"{refs} reference(s) moved" in r.stdout, r.stdout + r.stderr
    moved_files = [moved / f.relative_to(src) for f in files]
    for v in ("t2m", "sp", "tp"):
        np.testing.assert_array_equal(gdal.Open(f'ZARR3:"{repo}":/{v}').ReadAsArray(),
                                      raw_values(moved_files, v), err_msg=v)


@pytest.mark.parametrize("name", ["a?b.nc", "a#b.nc"])
def test_virtualize_query_and_fragment_characters_are_refused(exe, tmp_path, name):
    """'?' and '#' start a URL's query and fragment for URL parsers (Icechunk's among them): a reference
    naming such a file would name another object there; refused naming the file, nothing written."""
    f = tmp_path / name
    write_month(f, 1, 31)
    r = run(exe, "virtualize", tmp_path / "v.icechunk", f, "--concat-dim", "time")
    assert r.returncode == 1 and name in r.stderr, r.stderr
    assert not list(tmp_path.glob("v.icechunk*"))
