"""Band descriptions, band metadata and per-band scale/offset/unit: written by
CreateCopy and by the Set* methods in update mode, stored as plain array
attributes (band_descriptions, band_metadata, CF scale_factor/add_offset/units
or band_scale_factor/band_add_offset/band_units), read back after reopening."""
import json

import numpy as np
import pytest
from osgeo import gdal, osr

from conftest import drop_consolidated


def mem_source(nb=3, w=8, h=6, dtype=gdal.GDT_UInt16):
    ds = gdal.GetDriverByName("MEM").Create("", w, h, nb, dtype)
    ds.SetGeoTransform([500000.0, 10.0, 0.0, 4000000.0, 0.0, -10.0])
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(32631)
    ds.SetSpatialRef(srs)
    for b in range(nb):
        ds.GetRasterBand(b + 1).WriteArray(np.full((h, w), 100 * (b + 1), np.uint16))
    return ds


def array_attrs(store, name):
    return json.loads((store / name / "zarr.json").read_text())["attributes"]


class Warnings:
    """Collects CPLError warnings (exceptions mode turns only errors into exceptions)."""

    def __init__(self):
        self.messages = []

    def __call__(self, cls, num, msg):
        if cls == gdal.CE_Warning:
            self.messages.append(msg)

    def __enter__(self):
        gdal.PushErrorHandler(self)
        return self

    def __exit__(self, *a):
        gdal.PopErrorHandler()


def test_copy_descriptions_metadata_and_differing_scale(tmp_path):
    src = mem_source()
    names = ["Red", "Green", "Blue"]
    waves = ["665", "560", "490"]
    for b in range(3):
        band = src.GetRasterBand(b + 1)
        band.SetDescription(names[b])
        band.SetMetadataItem("WAVELENGTH", waves[b])
        band.SetMetadataItem("proj:like", "a=b")  # ':' and '=' survive in band metadata
        band.SetScale([0.01, 0.02, 0.01][b])
        band.SetOffset([0.0, 1.5, 0.0][b])
        band.SetUnitType("reflectance")
    out = tmp_path / "s2.zarr"
    gdal.Translate(str(out), src, format="Zarr3")

    attrs = array_attrs(out, "s2")
    assert attrs["band_descriptions"] == names
    assert attrs["band_metadata"] == [{"WAVELENGTH": w, "proj:like": "a=b"} for w in waves]
    assert attrs["band_scale_factor"] == [0.01, 0.02, 0.01]
    assert attrs["band_add_offset"] == [0.0, 1.5, 0.0]
    assert attrs["units"] == "reflectance"
    for k in ("scale_factor", "add_offset", "band_units"):
        assert k not in attrs

    z = gdal.Open(str(out))
    for b in range(3):
        band = z.GetRasterBand(b + 1)
        assert band.GetDescription() == names[b]
        assert band.GetMetadataItem("WAVELENGTH") == waves[b]
        assert band.GetMetadataItem("proj:like") == "a=b"
        assert band.GetScale() == [0.01, 0.02, 0.01][b]
        assert band.GetOffset() == [0.0, 1.5, 0.0][b]
        assert band.GetUnitType() == "reflectance"
    # Band metadata items are not dataset metadata.
    assert z.GetMetadataItem("band_descriptions") is None
    assert z.GetMetadataItem("band_metadata") is None
    assert z.GetMetadataItem("units") is None


def test_shared_scale_written_the_cf_way(tmp_path):
    src = mem_source()
    for b in range(3):
        band = src.GetRasterBand(b + 1)
        band.SetScale(0.5)
        band.SetOffset(-10.0)
        band.SetUnitType("K")
    out = tmp_path / "cf.zarr"
    gdal.Translate(str(out), src, format="Zarr3")
    attrs = array_attrs(out, "cf")
    assert (attrs["scale_factor"], attrs["add_offset"], attrs["units"]) == (0.5, -10.0, "K")
    for k in ("band_scale_factor", "band_add_offset", "band_units", "band_descriptions", "band_metadata"):
        assert k not in attrs
    z = gdal.Open(str(out))
    for b in range(3):
        band = z.GetRasterBand(b + 1)
        assert (band.GetScale(), band.GetOffset(), band.GetUnitType()) == (0.5, -10.0, "K")
    # Unscaled values as the CF way: raw * scale + offset.
    assert band.ReadAsArray()[0, 0] * 0.5 - 10.0 == 140.0


def test_differing_units_per_band(tmp_path):
    src = mem_source(nb=2)
    src.GetRasterBand(1).SetUnitType("K")
    src.GetRasterBand(2).SetUnitType("mm")
    out = tmp_path / "u.zarr"
    gdal.Translate(str(out), src, format="Zarr3")
    attrs = array_attrs(out, "u")
    assert attrs["band_units"] == ["K", "mm"] and "units" not in attrs
    z = gdal.Open(str(out))
    assert [z.GetRasterBand(b).GetUnitType() for b in (1, 2)] == ["K", "mm"]


def test_no_descriptions_keep_the_band_coordinate_description(tmp_path):
    out = tmp_path / "plain.zarr"
    gdal.Translate(str(out), mem_source(), format="Zarr3")
    assert "band_descriptions" not in array_attrs(out, "plain")
    z = gdal.Open(str(out))
    assert [z.GetRasterBand(b).GetDescription() for b in (1, 2, 3)] == ["band=0", "band=1", "band=2"]
    # A lone band axis without coordinate: its index (the band number - 1) is no item, so
    # rasterio's tags() of a plain multi-band store are empty as for a GeoTIFF (issue 32).
    assert z.GetRasterBand(2).GetMetadata() == {}


def test_empty_dimension_name_labels_bands_like_no_name(tmp_path):
    """An empty dimension name is no name (zarr3::dimension_name, shared with
    the multidimensional view): the band axis is labelled dim0."""
    out = tmp_path / "e.zarr"
    gdal.Translate(str(out), mem_source(), format="Zarr3")
    for node in (out / "e" / "zarr.json", out / "zarr.json"):
        meta = json.loads(node.read_text())
        entry = ((meta.get("consolidated_metadata") or {}).get("metadata") or {}).get("e", meta)
        if "dimension_names" in entry:
            entry["dimension_names"][0] = ""
        node.write_text(json.dumps(meta))
    z = gdal.Open(f'ZARR3:"{out}":/e')
    descriptions = [z.GetRasterBand(b).GetDescription() for b in (1, 2, 3)]
    assert descriptions == ["dim0=0", "dim0=1", "dim0=2"]
    # A lone band axis without a coordinate gives no DIM_<name>_INDEX item (rasterio tags), and
    # never one named after an empty name.
    assert z.GetRasterBand(2).GetMetadataItem("DIM_dim0_INDEX") is None
    assert z.GetRasterBand(2).GetMetadataItem("DIM__INDEX") is None


def test_zarr_to_zarr_copy_does_not_store_derived_descriptions(tmp_path):
    a = tmp_path / "a.zarr"
    gdal.Translate(str(a), mem_source(), format="Zarr3")
    b = tmp_path / "b.zarr"
    gdal.Translate(str(b), str(a), format="Zarr3")
    attrs = array_attrs(b, "b")
    assert "band_descriptions" not in attrs and "band_metadata" not in attrs


def test_update_mode_setters(tmp_path):
    out = tmp_path / "u.zarr"
    ds = gdal.GetDriverByName("Zarr3").Create(str(out), 10, 5, 3, gdal.GDT_Float32)
    ds = None
    ds = gdal.Open(str(out), gdal.GA_Update)
    ds.GetRasterBand(2).SetDescription("NIR")
    ds.GetRasterBand(2).SetMetadataItem("WAVELENGTH", "842")
    ds.GetRasterBand(3).SetScale(2.0)
    for b in (1, 2, 3):
        ds.GetRasterBand(b).SetUnitType("W m-2")
    ds = None
    attrs = array_attrs(out, "u")
    assert attrs["band_descriptions"] == ["", "NIR", ""]
    assert attrs["band_metadata"] == [{}, {"WAVELENGTH": "842"}, {}]
    assert attrs["band_scale_factor"] == [1.0, 1.0, 2.0]
    assert "band_add_offset" not in attrs and "add_offset" not in attrs
    assert attrs["units"] == "W m-2"

    z = gdal.Open(str(out))
    assert [z.GetRasterBand(b).GetDescription() for b in (1, 2, 3)] == ["band=0", "NIR", "band=2"]
    assert z.GetRasterBand(2).GetMetadataItem("WAVELENGTH") == "842"
    assert z.GetRasterBand(1).GetMetadataItem("WAVELENGTH") is None
    assert [z.GetRasterBand(b).GetScale() for b in (1, 2, 3)] == [1.0, 1.0, 2.0]
    assert z.GetRasterBand(3).GetUnitType() == "W m-2"
    z = None

    # Clearing: the description goes back to the coordinate one, the lists go.
    ds = gdal.Open(str(out), gdal.GA_Update)
    ds.GetRasterBand(2).SetDescription("")
    ds.GetRasterBand(2).SetMetadata({})
    ds.GetRasterBand(3).SetScale(1.0)
    ds = None
    attrs = array_attrs(out, "u")
    for k in ("band_descriptions", "band_metadata", "band_scale_factor", "scale_factor"):
        assert k not in attrs
    z = gdal.Open(str(out))
    assert z.GetRasterBand(2).GetDescription() == "band=1"
    assert z.GetRasterBand(2).GetMetadataItem("WAVELENGTH") is None


def test_single_band_description(tmp_path):
    src = mem_source(nb=1)
    src.GetRasterBand(1).SetDescription("elevation")
    src.GetRasterBand(1).SetMetadataItem("SOURCE", "lidar")
    out = tmp_path / "one.zarr"
    gdal.Translate(str(out), src, format="Zarr3")
    assert array_attrs(out, "one")["band_descriptions"] == ["elevation"]
    z = gdal.Open(str(out))
    assert z.GetRasterBand(1).GetDescription() == "elevation"
    assert z.GetRasterBand(1).GetMetadataItem("SOURCE") == "lidar"


def test_geotiff_round_trip(tmp_path):
    tif = tmp_path / "src.tif"
    src = gdal.GetDriverByName("GTiff").CreateCopy(str(tif), mem_source())
    for b, (n, w) in enumerate([("Red", "665"), ("Green", "560"), ("Blue", "490")]):
        src.GetRasterBand(b + 1).SetDescription(n)
        src.GetRasterBand(b + 1).SetMetadataItem("WAVELENGTH", w)
    src = None
    z = tmp_path / "rgb.zarr"
    gdal.Translate(str(z), str(tif), format="Zarr3")
    back = tmp_path / "back.tif"
    gdal.Translate(str(back), str(z))
    t = gdal.Open(str(back))
    assert [t.GetRasterBand(b).GetDescription() for b in (1, 2, 3)] == ["Red", "Green", "Blue"]
    assert [t.GetRasterBand(b).GetMetadataItem("WAVELENGTH") for b in (1, 2, 3)] == ["665", "560", "490"]


def test_what_cannot_be_stored_warns(tmp_path):
    src = gdal.GetDriverByName("MEM").Create("", 4, 4, 1, gdal.GDT_Byte)
    ct = gdal.ColorTable()
    ct.SetColorEntry(1, (255, 0, 0, 255))
    src.GetRasterBand(1).SetColorTable(ct)
    out = tmp_path / "ct.zarr"
    with Warnings() as w:
        gdal.Translate(str(out), src, format="Zarr3")
    assert any("color table is not written" in m for m in w.messages)

    ds = gdal.Open(str(out), gdal.GA_Update)
    with Warnings() as w:
        ds.GetRasterBand(1).SetMetadataItem("DIM_x_INDEX", "3")  # no band axis: stored
        ds.GetRasterBand(1).SetMetadataItem("a=b", "1")
    ds = None
    assert any("holds '='" in m for m in w.messages)
    assert array_attrs(out, "ct")["band_metadata"] == [{"DIM_x_INDEX": "3"}]


def test_derived_item_with_another_value_warns(tmp_path):
    out = tmp_path / "d.zarr"
    gdal.Translate(str(out), mem_source(), format="Zarr3",
                   creationOptions=["APPEND_DIM=level", "APPEND_COORD=850,500,300"])
    ds = gdal.Open(str(out), gdal.GA_Update)
    with Warnings() as w:
        ds.GetRasterBand(1).SetMetadataItem("DIM_level_INDEX", "7")
        ds.GetRasterBand(1).SetMetadataItem("DIM_level_INDEX", "0")  # same value: silent
    ds = None
    assert len(w.messages) == 1 and "derived from the band axis" in w.messages[0]
    assert "band_metadata" not in array_attrs(out, "d")


def test_read_only_setters_do_not_touch_zarr_json(tmp_path):
    out = tmp_path / "ro.zarr"
    gdal.Translate(str(out), mem_source(), format="Zarr3")
    before = (out / "ro" / "zarr.json").read_text()
    ds = gdal.Open(str(out))
    ds.GetRasterBand(1).SetDescription("pam only")
    with pytest.raises(RuntimeError):
        ds.GetRasterBand(1).SetScale(3.0)
    ds = None
    assert (out / "ro" / "zarr.json").read_text() == before
    # Like any GDAL driver without update: the description is kept in PAM.
    assert gdal.Open(str(out)).GetRasterBand(1).GetDescription() == "pam only"


def test_malformed_band_lists_warn_and_are_ignored(tmp_path):
    out = tmp_path / "m.zarr"
    gdal.Translate(str(out), mem_source(), format="Zarr3")
    p = out / "m" / "zarr.json"
    meta = json.loads(p.read_text())
    meta["attributes"]["band_descriptions"] = ["only one"]
    p.write_text(json.dumps(meta))
    drop_consolidated(out)
    with Warnings() as w:
        z = gdal.Open(str(out))
    assert any("band_descriptions ignored" in m for m in w.messages)
    assert z.GetRasterBand(1).GetDescription() == "band=0"


def test_rgb_colour_interpretation_is_kept_on_copy(tmp_path):
    """Issue 41: an RGB(A) GeoTIFF copied to Zarr3 lost its colour interpretation (all bands
    Undefined). It is stored as band_color_interpretation (one GDAL name per band)."""
    tif = str(tmp_path / "rgba.tif")
    src = gdal.GetDriverByName("GTiff").Create(tif, 8, 6, 4, gdal.GDT_Byte,
                                                options=["PHOTOMETRIC=RGB", "ALPHA=YES"])
    src = None
    out = tmp_path / "rgba.zarr"
    with Warnings() as w:
        gdal.Translate(str(out), tif, format="Zarr3")
    assert not w.messages, w.messages
    ds = gdal.Open(str(out))
    got = [ds.GetRasterBand(b).GetColorInterpretation() for b in range(1, 5)]
    assert got == [gdal.GCI_RedBand, gdal.GCI_GreenBand, gdal.GCI_BlueBand, gdal.GCI_AlphaBand]
    assert array_attrs(out, "rgba")["band_color_interpretation"] == ["Red", "Green", "Blue", "Alpha"]
    # and back to GeoTIFF: an RGBA image again
    back = str(tmp_path / "back.tif")
    gdal.Translate(back, str(out), format="GTiff")
    b = gdal.Open(back)
    assert [b.GetRasterBand(i).GetColorInterpretation() for i in range(1, 5)] == got


def test_colour_interpretation_set_in_update_mode_persists(tmp_path):
    out = tmp_path / "ci.zarr"
    gdal.Translate(str(out), mem_source(3), format="Zarr3")
    assert "band_color_interpretation" not in array_attrs(out, "ci")  # Undefined: not stored
    ds = gdal.Open(str(out), gdal.GA_Update)
    for b, ci in enumerate((gdal.GCI_BlueBand, gdal.GCI_GreenBand, gdal.GCI_RedBand), 1):
        assert ds.GetRasterBand(b).SetColorInterpretation(ci) == gdal.CE_None
    ds = None
    # in the store (read by every opener), not only in a .aux.xml beside it
    assert array_attrs(out, "ci")["band_color_interpretation"] == ["Blue", "Green", "Red"]
    ds = gdal.Open(str(out))
    assert [ds.GetRasterBand(b).GetColorInterpretation() for b in (1, 2, 3)] == [
        gdal.GCI_BlueBand, gdal.GCI_GreenBand, gdal.GCI_RedBand]


def test_palette_colour_interpretation_that_cannot_be_kept_warns(tmp_path):
    """A palette band's colour interpretation needs its colour table, which Zarr3 does not
    store: a warning says both are lost, and the band does not claim to be a palette index."""
    src = gdal.GetDriverByName("MEM").Create("", 4, 4, 1, gdal.GDT_Byte)
    ct = gdal.ColorTable()
    ct.SetColorEntry(1, (255, 0, 0, 255))
    src.GetRasterBand(1).SetColorTable(ct)
    assert src.GetRasterBand(1).GetColorInterpretation() == gdal.GCI_PaletteIndex
    out = tmp_path / "pal.zarr"
    with Warnings() as w:
        gdal.Translate(str(out), src, format="Zarr3")
    assert any("colour interpretation Palette is not kept" in m for m in w.messages), w.messages
    assert gdal.Open(str(out)).GetRasterBand(1).GetColorInterpretation() != gdal.GCI_PaletteIndex
