"""Icechunk repositories written for a test by zarr3_icechunk_build (core/tests/tools/, a build
target beside the plugin; the writer is core/tests/icechunk/icechunk_writer.hpp): one commit on
branch main with groups, arrays and their chunk references (inline, native, virtual with an
optional ETag or last-modified checksum), and the virtual chunk containers the repository
declares."""
import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

TOOL = Path(os.environ["GDAL_DRIVER_PATH"]) / "zarr3_icechunk_build"


def zarr_json(shape, chunks, dtype="uint8", fill=0):
    return {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": dtype,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": fill, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}


def build_repo(out_dir, arrays, groups=(), containers=(), manifest_padding=0):
    """Writes the repository into `out_dir`. `arrays`: [{"path", "zarr_json", "refs"}], each ref
    {"index": [..]} plus one of "inline": [bytes], "native": [bytes] or "location" (with
    "offset", "length" and optionally "etag" or "last_modified")."""
    if not TOOL.exists():
        pytest.fail(f"{TOOL} is missing: build the zarr3_icechunk_build target")
    spec = {"arrays": list(arrays), "groups": list(groups), "containers": list(containers),
            "manifest_padding": manifest_padding}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(spec, f)
    try:
        subprocess.run([str(TOOL), str(out_dir), f.name], check=True, capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    return str(out_dir)


def edit_repo(repo, *args):
    """Another writer's edit of an existing repository (zarr3_icechunk_build): ("--move", FROM, TO)
    or ("--delete", PATH) commit on main with that change in the transaction log; ("--status",
    "read_only" | "offline" | "online"[, REASON]) and ("--disable-flag", ID) rewrite the repo file.
    Returns the tool's output (the new snapshot id of a commit)."""
    p = subprocess.run([str(TOOL), args[0], str(repo), *map(str, args[1:])], capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()
