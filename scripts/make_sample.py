#!/usr/bin/env python3
"""Writes data/daily_t2m_2023.zarr: the demo sample, by hand, following the Zarr v3
spec (no zarr library needed): a georeferenced group with one year of synthetic daily
2 m temperature (365 x 32 x 64 float32) on a rectilinear chunk grid of one chunk per
calendar month, each chunk stored as a shard (sharding_indexed) of (1, 16, 32) inner
chunks compressed with gzip, shard index protected by crc32c. Coordinates lat/lon/time
are 1-D arrays; spatial_ref carries the CRS (CF grid_mapping) and t2m also carries
GeoZarr-style spatial:/proj: attributes.

usage: scripts/make_sample.py [OUTPUT_DIR]   (default: data/daily_t2m_2023.zarr)
The output is deterministic, so regenerating gives identical files.
"""
import json
import shutil
import sys
from pathlib import Path

import numpy as np

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:  # also when loaded by path (autotest/test_driver.py)
    sys.path.insert(0, str(_HERE))
from shard_encoder import encode_shard, gzip_bytes  # noqa: E402

MONTHS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
NT, NY, NX = 365, 32, 64
INNER = (1, 16, 32)
WEST, NORTH, RES = -20.0, 72.0, 1.0
CRS_WKT = (
    'GEOGCRS["WGS 84",DATUM["World Geodetic System 1984",ELLIPSOID["WGS 84",6378137,298.257223563]],'
    'CS[ellipsoidal,2],AXIS["geodetic latitude (Lat)",north],AXIS["geodetic longitude (Lon)",east],'
    'UNIT["degree",0.0174532925199433],ID["EPSG",4326]]'
)


def write_json(path: Path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2) + "\n")


def plain_array(root: Path, name, data: np.ndarray, dims, attrs, fill=0):
    """A single-chunk array with bytes + gzip codecs."""
    dtype = {np.dtype("<f8"): "float64", np.dtype("<i8"): "int64", np.dtype("<i4"): "int32"}[data.dtype]
    meta = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": list(data.shape),
        "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(data.shape)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 6}}],
        "attributes": attrs,
    }
    if dims is not None:
        meta["dimension_names"] = dims
    write_json(root / name / "zarr.json", meta)
    key = "c" if data.ndim == 0 else "c/" + "/".join("0" * data.ndim)
    (root / name / key).parent.mkdir(parents=True, exist_ok=True)
    (root / name / key).write_bytes(gzip_bytes(np.ascontiguousarray(data).tobytes(), level=6))


def temperature():
    t = np.arange(NT)[:, None, None]
    lat = (NORTH - RES / 2 - np.arange(NY) * RES)[None, :, None]
    lon = (WEST + RES / 2 + np.arange(NX) * RES)[None, None, :]
    season = -12.0 * np.cos(2 * np.pi * (t - 15) / 365.0) * (0.5 + (lat - 40) / 64)
    field = 288.0 - 0.55 * (lat - 40) + 3.0 * np.sin(np.radians(lon) * 4) * np.cos(np.radians(lat) * 3)
    weather = 2.5 * np.sin(t / 3.1 + lon / 9.0) * np.cos(t / 5.3 + lat / 7.0)
    v = season + field + weather
    return (np.round(v * 8) / 8).astype("<f4")  # 1/8 K steps: realistic and compressible


def main():
    repo = Path(__file__).resolve().parent.parent
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else repo / "data" / "daily_t2m_2023.zarr"
    if out.exists():
        shutil.rmtree(out)
    write_json(
        out / "zarr.json",
        {
            "zarr_format": 3,
            "node_type": "group",
            "attributes": {
                "title": "Synthetic daily 2 m temperature, 2023 (gdal-zarr3 demo sample)",
                "Conventions": "CF-1.8",
                "source": "scripts/make_sample.py",
            },
        },
    )

    # Coordinates and CRS.
    lat = NORTH - RES / 2 - np.arange(NY) * RES
    lon = WEST + RES / 2 + np.arange(NX) * RES
    plain_array(out, "lat", lat.astype("<f8"), ["lat"], {"units": "degrees_north", "standard_name": "latitude", "axis": "Y"})
    plain_array(out, "lon", lon.astype("<f8"), ["lon"], {"units": "degrees_east", "standard_name": "longitude", "axis": "X"})
    plain_array(
        out, "time", np.arange(NT, dtype="<i8"), ["time"],
        {"units": "days since 2023-01-01", "calendar": "proleptic_gregorian", "standard_name": "time", "axis": "T"},
        fill=-(2**63),  # not 0: 0 is 2023-01-01, a real day (the int64 minimum is numpy's NaT)
    )
    plain_array(
        out, "spatial_ref", np.array(0, dtype="<i4"), None,
        {"crs_wkt": CRS_WKT, "spatial_ref": CRS_WKT, "grid_mapping_name": "latitude_longitude",
         "GeoTransform": f"{WEST} {RES} 0 {NORTH} 0 {-RES}"},
    )

    # The data: rectilinear month chunks (run-length encoded where months repeat), sharded.
    data = temperature()
    edges = []
    for m in MONTHS:  # compress equal neighbours into [edge, count] runs
        if edges and isinstance(edges[-1], list) and edges[-1][0] == m:
            edges[-1][1] += 1
        elif edges and edges[-1] == m:
            edges[-1] = [m, 2]
        else:
            edges.append(m)
    meta = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [NT, NY, NX],
        "data_type": "float32",
        "chunk_grid": {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [edges, NY, NX]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": "NaN",
        "codecs": [
            {
                "name": "sharding_indexed",
                "configuration": {
                    "chunk_shape": list(INNER),
                    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 6}}],
                    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
                    "index_location": "end",
                },
            }
        ],
        "attributes": {
            "long_name": "2 m air temperature",
            "standard_name": "air_temperature",
            "units": "K",
            "grid_mapping": "spatial_ref",
            "proj:code": "EPSG:4326",
            "spatial:dimensions": ["lat", "lon"],
            "spatial:transform": [RES, 0.0, WEST, 0.0, -RES, NORTH],
            "spatial:shape": [NY, NX],
        },
        "dimension_names": ["time", "lat", "lon"],
    }
    write_json(out / "t2m" / "zarr.json", meta)
    start = 0
    for m, n in enumerate(MONTHS):
        shard = data[start:start + n]
        cps = (n // INNER[0], NY // INNER[1], NX // INNER[2])
        chunks = []
        for i in range(cps[0]):
            for j in range(cps[1]):
                for k in range(cps[2]):
                    inner = shard[i * INNER[0]:(i + 1) * INNER[0], j * INNER[1]:(j + 1) * INNER[1], k * INNER[2]:(k + 1) * INNER[2]]
                    chunks.append(gzip_bytes(np.ascontiguousarray(inner).tobytes(), level=6))
        key = out / "t2m" / "c" / str(m) / "0" / "0"
        key.parent.mkdir(parents=True, exist_ok=True)
        key.write_bytes(encode_shard(chunks))
        start += n
    total = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"wrote {out} ({total} bytes)")


if __name__ == "__main__":
    main()
