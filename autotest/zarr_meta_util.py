"""Zarr v3 array metadata for tests that break it on purpose (test_driver.py,
test_malformed.py): a small valid array and mutations of one member."""

DELETE = object()  # value for mutate(): remove the member
CS = ("chunk_grid", "configuration", "chunk_shapes")  # path of the rectilinear edges


def base_array_meta():
    """zarr.json of a valid 10x6 int16 array: rectilinear rows [4, 6], columns of 3, bytes codec."""
    return {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [10, 6],
        "data_type": "int16",
        "chunk_grid": {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[4, 6], 3]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    }


def mutate(path, value):
    """f(meta): sets meta[path[0]]...[path[-1]] = value in place (DELETE removes
    that member) and returns meta."""

    def f(m):
        d = m
        for k in path[:-1]:
            d = d[k]
        if value is DELETE:
            del d[path[-1]]
        else:
            d[path[-1]] = value
        return m

    return f
