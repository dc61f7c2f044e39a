"""Reading and rewriting the metadata files of an Icechunk repository (spec 2: `repo`, `snapshots/<id>`,
`manifests/<id>`; core/icechunk/schemas/*.fbs), to make hostile copies of valid repositories.

Each file is a 39-byte header (12 magic bytes, 24 bytes of writer name, spec version, file type,
compression: 0 none, 1 zstd) and a flatbuffer. zstd through libzstd (ctypes: the plugin's own
dependency, so always there); flatbuffers read by hand (only the tables below).
"""
import ctypes
import ctypes.util
import struct
from pathlib import Path

HEADER = 39
COMPRESSION = 38  # the header byte saying how the flatbuffer is stored

_lib = ctypes.util.find_library("zstd")
_zstd = ctypes.CDLL(_lib or "libzstd.so.1")
_zstd.ZSTD_decompress.restype = ctypes.c_size_t
_zstd.ZSTD_decompress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
_zstd.ZSTD_compress.restype = ctypes.c_size_t
_zstd.ZSTD_compress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
_zstd.ZSTD_compressBound.restype = ctypes.c_size_t
_zstd.ZSTD_compressBound.argtypes = [ctypes.c_size_t]
_zstd.ZSTD_isError.restype = ctypes.c_uint
_zstd.ZSTD_isError.argtypes = [ctypes.c_size_t]


def read(path):
    """(header bytes, flatbuffer as a bytearray) of a metadata file."""
    data = Path(path).read_bytes()
    body = data[HEADER:]
    if data[COMPRESSION] == 0:
        return data[:HEADER], bytearray(body)
    assert data[COMPRESSION] == 1, f"{path}: compression {data[COMPRESSION]}"
    cap = 1 << 20  # Icechunk streams its frames: no content size to size the output with
    while True:
        out = ctypes.create_string_buffer(cap)
        n = _zstd.ZSTD_decompress(out, cap, body, len(body))
        if not _zstd.ZSTD_isError(n):
            return data[:HEADER], bytearray(out.raw[:n])
        assert cap < 1 << 28, f"{path}: cannot decompress"
        cap *= 4


def write(path, header, flatbuffer):
    """Writes a metadata file stored the way `header` says (zstd-compressed again when it was)."""
    fb = bytes(flatbuffer)
    if header[COMPRESSION] == 1:
        cap = _zstd.ZSTD_compressBound(len(fb))
        out = ctypes.create_string_buffer(cap)
        n = _zstd.ZSTD_compress(out, cap, fb, len(fb), 3)
        assert not _zstd.ZSTD_isError(n)
        fb = out.raw[:n]
    Path(path).write_bytes(bytes(header) + fb)


class Flatbuffer:
    """Positions in a flatbuffer: tables, their fields (by index in the schema, a union taking two),
    vectors."""

    def __init__(self, buf):
        self.buf = buf

    def u32(self, pos):
        return struct.unpack_from("<I", self.buf, pos)[0]

    def root(self):
        return self.u32(0)

    def field(self, table, i):
        """Position of field i of the table at `table`, None when absent (default value)."""
        vtable = table - struct.unpack_from("<i", self.buf, table)[0]
        if 4 + 2 * i >= struct.unpack_from("<H", self.buf, vtable)[0]:
            return None
        off = struct.unpack_from("<H", self.buf, vtable + 4 + 2 * i)[0]
        return table + off if off else None

    def target(self, table, i):
        """Where the offset in field i (a table, vector or string) points: a vector's length field."""
        p = self.field(table, i)
        return p + self.u32(p)

    def tables(self, table, i):
        """The tables of the vector in field i."""
        v = self.target(table, i)
        return [v + 4 + 4 * k + self.u32(v + 4 + 4 * k) for k in range(self.u32(v))]

    def string(self, table, i):
        v = self.target(table, i)
        return bytes(self.buf[v + 4:v + 4 + self.u32(v)]).decode()


_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def encode_id(raw):
    """An object id as Icechunk names its files (Crockford base32, no padding)."""
    acc = bits = 0
    out = ""
    for b in raw:
        acc, bits = (acc << 8) | b, bits + 8
        while bits >= 5:
            out += _ALPHABET[(acc >> (bits - 5)) & 31]
            bits -= 5
    if bits:
        out += _ALPHABET[(acc << (5 - bits)) & 31]
    return out


# Field indexes (core/icechunk/schemas): Repo.branches 2, Repo.snapshots 4; Ref.name 0,
# Ref.snapshot_index 1; SnapshotInfo.id 0 (an ObjectId12 struct); Snapshot.nodes 2; NodeSnapshot.path 1,
# node_data 4 (3 is its union type); ArrayNodeData.manifests 2; ManifestRef.object_id 0, extents 1
# ({from, to} uint32 structs); Manifest.arrays 1; ArrayManifest.refs 1; ChunkRef.length 3.
MAIN_VECTOR = {"repo": 4, "snapshot": 2, "manifest": 1}  # snapshots, nodes, arrays


def head_snapshot(repo, branch="main"):
    """The snapshot id a branch points at, from the `repo` file."""
    _, buf = read(Path(repo) / "repo")
    fb = Flatbuffer(buf)
    snapshots = fb.tables(fb.root(), 4)
    for ref in fb.tables(fb.root(), 2):
        if fb.string(ref, 0) == branch:
            p = fb.field(ref, 1)
            sid = fb.field(snapshots[fb.u32(p) if p is not None else 0], 0)
            return encode_id(buf[sid:sid + 12])
    raise KeyError(f"{repo}: no branch {branch}")


def first_chunk_manifest(repo, snapshot_id, node_path):
    """The id of the manifest holding chunk (0, ..., 0) of an array node, from the snapshot."""
    _, buf = read(Path(repo) / "snapshots" / snapshot_id)
    fb = Flatbuffer(buf)
    for node in fb.tables(fb.root(), 2):
        if fb.string(node, 1) != node_path:
            continue
        for ref in fb.tables(fb.target(node, 4), 2):
            ext = fb.target(ref, 1)
            axes = [struct.unpack_from("<II", buf, ext + 4 + 8 * k) for k in range(fb.u32(ext))]
            if all(lo == 0 < hi for lo, hi in axes):
                oid = fb.field(ref, 0)
                return encode_id(buf[oid:oid + 12])
    raise KeyError(f"{repo}: no manifest of {node_path} with chunk 0 in snapshot {snapshot_id}")


def metadata_file(repo, kind, node_path):
    """The file of a kind ("repo", "snapshot", "manifest") that opening the repository and reading
    chunk 0 of `node_path` on branch main needs."""
    repo = Path(repo)
    if kind == "repo":
        return repo / "repo"
    head = head_snapshot(repo)
    if kind == "snapshot":
        return repo / "snapshots" / head
    return repo / "manifests" / first_chunk_manifest(repo, head, node_path)


def set_main_vector_length(path, kind, n):
    """Rewrites the length of the file's main vector (repo: snapshots, snapshot: nodes, manifest:
    arrays) to n, nothing else changed."""
    header, buf = read(path)
    fb = Flatbuffer(buf)
    struct.pack_into("<I", buf, fb.target(fb.root(), MAIN_VECTOR[kind]), n)
    write(path, header, buf)


def set_root_offset(path, offset):
    header, buf = read(path)
    struct.pack_into("<I", buf, 0, offset)
    write(path, header, buf)


def set_chunk_ref_lengths(path, length):
    """Sets the `length` of every chunk reference of a manifest that has one (native and virtual);
    returns how many."""
    header, buf = read(path)
    fb = Flatbuffer(buf)
    n = 0
    for array in fb.tables(fb.root(), 1):
        for ref in fb.tables(array, 1):
            p = fb.field(ref, 3)
            if p is not None:
                struct.pack_into("<Q", buf, p, length)
                n += 1
    write(path, header, buf)
    return n
