"""A small Zarr v3 writer for test data: a 2-D root array with sharding_indexed
(bytes + gzip inner codecs, bytes + crc32c index at the end). The shard encoder
is scripts/shard_encoder.py, shared with scripts/make_sample.py."""
import json
import sys
from pathlib import Path

import numpy as np

sys.path.append(str(Path(__file__).resolve().parent.parent / "scripts"))
from shard_encoder import crc32c, encode_shard, gzip_bytes  # noqa: E402,F401  (crc32c: for tests)


def make_data(shape=(2048, 2048), dtype="<u2", seed=0):
    """Deterministic values that compress to roughly half: a gradient plus noise."""
    rng = np.random.default_rng(seed)
    y, x = np.indices(shape)
    v = (x * 3 + y * 5) % 4096 + rng.integers(0, 256, size=shape)
    return v.astype(dtype)


def write_sharded_store(root, data, shard=(512, 512), inner=(128, 128), fill=0):
    """Writes `data` (2-D) as a root array store at `root`; returns the shard
    file sizes by key ("c/0/0": n)."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    h, w = data.shape
    dt = np.dtype(data.dtype)
    name = {"u2": "uint16", "f4": "float32", "i4": "int32", "u1": "uint8"}[dt.str[1:]]
    meta = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [h, w],
        "data_type": name,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shard)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill,
        "codecs": [
            {
                "name": "sharding_indexed",
                "configuration": {
                    "chunk_shape": list(inner),
                    "codecs": [
                        {"name": "bytes", "configuration": {"endian": "little"}},
                        {"name": "gzip", "configuration": {"level": 1}},
                    ],
                    "index_codecs": [
                        {"name": "bytes", "configuration": {"endian": "little"}},
                        {"name": "crc32c"},
                    ],
                    "index_location": "end",
                },
            }
        ],
        "dimension_names": ["y", "x"],
        "attributes": {},
    }
    (root / "zarr.json").write_text(json.dumps(meta, indent=2))
    sizes = {}
    for sy in range(0, h, shard[0]):
        for sx in range(0, w, shard[1]):
            chunks = []
            for iy in range(sy, sy + shard[0], inner[0]):
                for ix in range(sx, sx + shard[1], inner[1]):
                    block = np.full(inner, fill, dtype=dt)
                    part = data[iy : iy + inner[0], ix : ix + inner[1]]
                    block[: part.shape[0], : part.shape[1]] = part
                    le = np.ascontiguousarray(block).astype(dt.newbyteorder("<")).tobytes()
                    chunks.append(gzip_bytes(le, level=1))
            key = f"c/{sy // shard[0]}/{sx // shard[1]}"
            path = root / key
            path.parent.mkdir(parents=True, exist_ok=True)
            blob = encode_shard(chunks)
            path.write_bytes(blob)
            sizes[key] = len(blob)
    return sizes
