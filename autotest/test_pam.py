"""PAM: statistics (and other auxiliary metadata) persist in <store>.aux.xml
beside the store, as with GDAL's own drivers; the .aux.xml never repeats what
zarr.json holds."""
import json
import os
import re

import numpy as np
import pytest
from osgeo import gdal

DATA = np.arange(1, 13, dtype=np.float32).reshape(3, 4)  # min 1, max 12, mean 6.5


def make_store(tmp_path, name="s.zarr", nb=1):
    src = gdal.GetDriverByName("MEM").Create("", 4, 3, nb, gdal.GDT_Float32)
    for b in range(nb):
        src.GetRasterBand(b + 1).WriteArray(DATA + 100 * b)
    src.SetMetadataItem("title", "t")
    out = tmp_path / name
    gdal.Translate(str(out), src, format="Zarr3")
    return out


def aux(store):
    return store.parent / (store.name + ".aux.xml")


def stats_items(text):
    return dict(re.findall(r'<MDI key="(STATISTICS_[A-Z_]+)">([^<]*)</MDI>', text))


def test_gdalinfo_stats_writes_aux_xml(tmp_path, run_tool):
    store = make_store(tmp_path)
    assert not aux(store).exists()
    p = run_tool("gdalinfo", "-stats", store, check=True)
    assert "Minimum=1.000, Maximum=12.000, Mean=6.500" in p.stdout
    text = aux(store).read_text()
    st = stats_items(text)
    assert float(st["STATISTICS_MINIMUM"]) == 1.0
    assert float(st["STATISTICS_MAXIMUM"]) == 12.0
    assert float(st["STATISTICS_MEAN"]) == 6.5
    assert float(st["STATISTICS_STDDEV"]) == pytest.approx(np.sqrt(143 / 12), rel=1e-12)
    # Nothing zarr.json holds is repeated there.
    assert "title" not in text and "ZARR3" not in text and "<Description>" not in text
    assert not any(p.name.endswith(".aux.xml") for p in store.rglob("*"))


def test_second_gdalinfo_stats_reads_aux_xml(tmp_path, run_tool):
    store = make_store(tmp_path)
    run_tool("gdalinfo", "-stats", store, check=True)
    # A recognisable value: read back, not recomputed.
    f = aux(store)
    f.write_text(re.sub(r'(<MDI key="STATISTICS_MEAN">)[^<]*', r"\g<1>123.25", f.read_text()))
    out = run_tool("gdalinfo", "-stats", store, check=True).stdout
    assert "Mean=123.250" in out
    assert gdal.Open(str(store)).GetRasterBand(1).GetMetadataItem("STATISTICS_MEAN") == "123.25"


def test_statistics_through_python_and_not_in_zarr_json(tmp_path):
    store = make_store(tmp_path, nb=2)
    ds = gdal.Open(str(store))
    assert ds.GetRasterBand(2).ComputeStatistics(False) == [101.0, 112.0, 106.5, pytest.approx(np.sqrt(143 / 12), rel=1e-12)]
    ds = None
    assert "STATISTICS" not in (store / "s" / "zarr.json").read_text()
    ds = gdal.Open(str(store))
    assert ds.GetRasterBand(2).GetStatistics(False, False)[:3] == [101.0, 112.0, 106.5]
    assert ds.GetRasterBand(1).GetMetadataItem("STATISTICS_MEAN") is None
    assert aux(store).exists()
    assert str(aux(store)) in ds.GetFileList()


def test_stats_after_write_update_mode(tmp_path):
    store = make_store(tmp_path)
    ds = gdal.Open(str(store))
    ds.GetRasterBand(1).ComputeStatistics(False)
    ds = None
    # Writing in update mode: recomputing replaces the stored values, and
    # ClearStatistics removes them (as for GeoTIFF and GDAL's other formats).
    ds = gdal.Open(str(store), gdal.GA_Update)
    ds.GetRasterBand(1).WriteArray(DATA * 2)
    assert ds.GetRasterBand(1).ComputeStatistics(False)[:3] == [2.0, 24.0, 13.0]
    ds = None
    assert float(stats_items(aux(store).read_text())["STATISTICS_MAXIMUM"]) == 24.0
    assert "STATISTICS" not in (store / "s" / "zarr.json").read_text()
    ds = gdal.Open(str(store))
    assert ds.GetRasterBand(1).GetMetadataItem("STATISTICS_MEAN") == "13"
    ds.ClearStatistics()
    ds = None
    assert not aux(store).exists() or "STATISTICS" not in aux(store).read_text()
    assert gdal.Open(str(store)).GetRasterBand(1).GetMetadataItem("STATISTICS_MEAN") is None


def test_read_only_metadata_goes_to_pam(tmp_path):
    store = make_store(tmp_path)
    before = (store / "s" / "zarr.json").read_text()
    ds = gdal.Open(str(store))
    ds.SetMetadataItem("note", "kept aside")
    ds.GetRasterBand(1).SetMetadataItem("CLOUDS", "3")
    ds = None
    assert (store / "s" / "zarr.json").read_text() == before
    text = aux(store).read_text()
    assert "kept aside" in text and "title" not in text
    ds = gdal.Open(str(store))
    assert ds.GetMetadataItem("note") == "kept aside"
    assert ds.GetMetadataItem("title") == "t"
    assert ds.GetRasterBand(1).GetMetadataItem("CLOUDS") == "3"


def test_update_mode_metadata_goes_to_zarr_json_not_pam(tmp_path):
    store = make_store(tmp_path)
    ds = gdal.Open(str(store), gdal.GA_Update)
    ds.SetMetadataItem("title", "new")
    ds.GetRasterBand(1).SetDescription("depth")
    ds.GetRasterBand(1).ComputeStatistics(False)
    ds = None
    attrs = json.loads((store / "s" / "zarr.json").read_text())["attributes"]
    assert attrs["title"] == "new" and attrs["band_descriptions"] == ["depth"]
    text = aux(store).read_text()
    assert "STATISTICS_MEAN" in text
    assert "title" not in text and "depth" not in text


def test_subdataset_names_share_the_store_aux_xml(tmp_path):
    store = make_store(tmp_path)
    name = f'ZARR3:"{store}":/s'
    ds = gdal.Open(name)
    ds.GetRasterBand(1).ComputeStatistics(False)
    ds = None
    text = aux(store).read_text()
    assert '<Subdataset name="/s">' in text
    assert gdal.Open(name).GetRasterBand(1).GetMetadataItem("STATISTICS_MAXIMUM") == "12"


def test_delete_and_recreate_remove_the_aux_xml(tmp_path):
    store = make_store(tmp_path)
    ds = gdal.Open(str(store))
    ds.GetRasterBand(1).ComputeStatistics(False)
    ds = None
    assert aux(store).exists()
    gdal.GetDriverByName("Zarr3").Delete(str(store))
    assert not store.exists() and not aux(store).exists()

    store = make_store(tmp_path)
    ds = gdal.Open(str(store))
    ds.GetRasterBand(1).ComputeStatistics(False)
    ds = None
    # Replacing a store: the old statistics would describe other data.
    gdal.GetDriverByName("Zarr3").Delete(str(store))
    aux(store).write_text('<PAMDataset><PAMRasterBand band="1"><Metadata>'
                          '<MDI key="STATISTICS_MEAN">999</MDI></Metadata></PAMRasterBand></PAMDataset>')
    make_store(tmp_path)
    assert gdal.Open(str(store)).GetRasterBand(1).GetMetadataItem("STATISTICS_MEAN") is None


def test_vsimem_store_pam(tmp_path):
    src = gdal.GetDriverByName("MEM").Create("", 4, 3, 1, gdal.GDT_Float32)
    src.GetRasterBand(1).WriteArray(DATA)
    gdal.Translate("/vsimem/pam_e.zarr", src, format="Zarr3")
    try:
        ds = gdal.Open("/vsimem/pam_e.zarr")
        ds.GetRasterBand(1).ComputeStatistics(False)
        ds = None
        assert gdal.VSIStatL("/vsimem/pam_e.zarr.aux.xml") is not None
        assert gdal.Open("/vsimem/pam_e.zarr").GetRasterBand(1).GetMetadataItem("STATISTICS_MINIMUM") == "1"
    finally:
        gdal.GetDriverByName("Zarr3").Delete("/vsimem/pam_e.zarr")
    assert gdal.VSIStatL("/vsimem/pam_e.zarr.aux.xml") is None


def test_descriptions_survive_saved_statistics(tmp_path):
    src = gdal.GetDriverByName("MEM").Create("", 4, 3, 2, gdal.GDT_Float32)
    src.GetRasterBand(1).SetDescription("Red")
    src.GetRasterBand(1).SetMetadataItem("proj:like", "a=b")  # PAM would split it at ':'
    out = tmp_path / "d.zarr"
    gdal.Translate(str(out), src, format="Zarr3")
    ds = gdal.Open(str(out))
    for b in (1, 2):
        ds.GetRasterBand(b).ComputeStatistics(False)
    ds = None
    text = aux(out).read_text()
    assert "Red" not in text and "proj" not in text and "band=1" not in text
    ds = gdal.Open(str(out))
    assert [ds.GetRasterBand(b).GetDescription() for b in (1, 2)] == ["Red", "band=1"]
    assert ds.GetRasterBand(1).GetMetadataItem("proj:like") == "a=b"
    assert ds.GetRasterBand(2).GetMetadataItem("STATISTICS_MAXIMUM") == "0"


def test_update_replaces_a_value_saved_read_only(tmp_path):
    store = make_store(tmp_path)
    ds = gdal.Open(str(store))
    ds.SetMetadataItem("note", "old")
    ds.GetRasterBand(1).SetDescription("old description")
    ds = None
    assert "old" in aux(store).read_text()
    ds = gdal.Open(str(store), gdal.GA_Update)
    assert ds.GetMetadataItem("note") == "old"
    ds.SetMetadataItem("note", "new")
    ds.GetRasterBand(1).SetDescription("new description")
    ds = None
    assert not aux(store).exists() or "old" not in aux(store).read_text()
    attrs = json.loads((store / "s" / "zarr.json").read_text())["attributes"]
    assert attrs["note"] == "new" and attrs["band_descriptions"] == ["new description"]
    ds = gdal.Open(str(store))
    assert ds.GetMetadataItem("note") == "new"
    assert ds.GetRasterBand(1).GetDescription() == "new description"


def test_emptied_subdataset_entry_keeps_the_others(tmp_path):
    store = make_store(tmp_path)
    name = f'ZARR3:"{store}":/s'
    ds = gdal.Open(str(store))
    ds.GetRasterBand(1).ComputeStatistics(False)  # plain entry
    ds = None
    ds = gdal.Open(name)
    ds.SetMetadataItem("sub", "1")
    ds = None
    ds = gdal.Open(name)
    ds.SetMetadataItem("sub", None)  # the subdataset entry empties
    ds = None
    text = aux(store).read_text()
    assert "STATISTICS_MEAN" in text and '"sub"' not in text
