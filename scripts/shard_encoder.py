"""Hand-written pieces of a Zarr v3 sharding_indexed encoder (no zarr library):
crc32c, reproducible gzip, and the shard layout with the index at the end.

Shared by scripts/make_sample.py (the demo sample) and autotest/sharded_writer.py
(test stores). Python's standard library has no zstd, hence gzip."""
import struct
import zlib


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283


def gzip_bytes(raw: bytes, level: int) -> bytes:
    co = zlib.compressobj(level, zlib.DEFLATED, 31)  # wbits 31: gzip container
    out = co.compress(raw) + co.flush()
    # Fixed header timestamp/OS so the output is reproducible.
    return out[:4] + b"\0\0\0\0" + out[8:9] + b"\xff" + out[10:]


def encode_shard(chunks) -> bytes:
    """One shard from its encoded inner chunks, in C order (every chunk stored):
    the chunks back to back, then the index of (offset, nbytes) little-endian
    uint64 pairs (index codecs bytes little + crc32c, index_location end)."""
    body = bytearray()
    entries = []
    for enc in chunks:
        entries.append((len(body), len(enc)))
        body += enc
    idx = b"".join(struct.pack("<QQ", o, n) for o, n in entries)
    return bytes(body) + idx + struct.pack("<I", crc32c(idx))
