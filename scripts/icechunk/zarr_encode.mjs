// Small Zarr v3 encoding helpers for write_fixtures.mjs: chunk edges of a rectilinear grid, block
// extraction, the bytes/gzip codecs, sharding_indexed shards (crc32c index) and .npy files.
// Only what the fixtures need; the values read back are checked against an Icechunk dump.
import { gzipSync } from 'node:zlib'

// [[start, size], ...] for each axis of a rectilinear chunk_shapes list (every axis a list).
export function axisEdges(chunkShapes) {
  return chunkShapes.map((sizes) => {
    let start = 0
    return sizes.map((s) => {
      const e = [start, s]
      start += s
      return e
    })
  })
}

// Every chunk index tuple of a grid given its per-axis counts, C order.
export function* gridIndices(counts) {
  const idx = counts.map(() => 0)
  if (counts.some((c) => c === 0)) return
  for (;;) {
    yield idx.slice()
    let k = counts.length - 1
    while (k >= 0) {
      idx[k] += 1
      if (idx[k] < counts[k]) break
      idx[k] = 0
      k -= 1
    }
    if (k < 0) return
  }
}

function strides(shape) {
  const s = shape.map(() => 1)
  for (let k = shape.length - 2; k >= 0; k--) s[k] = s[k + 1] * shape[k + 1]
  return s
}

// Copy the block [starts, starts+sizes) of a C-order typed array of `shape` into a new array.
export function extractBlock(values, shape, starts, sizes) {
  const out = new values.constructor(sizes.reduce((a, b) => a * b, 1))
  const st = strides(shape)
  let o = 0
  for (const rel of gridIndices(sizes)) {
    let off = 0
    for (let k = 0; k < shape.length; k++) off += (starts[k] + rel[k]) * st[k]
    out[o++] = values[off]
  }
  return out
}

// Write block (C order, `sizes`) into `values` of `shape` at `starts`.
export function placeBlock(values, shape, starts, sizes, block) {
  const st = strides(shape)
  let o = 0
  for (const rel of gridIndices(sizes)) {
    let off = 0
    for (let k = 0; k < shape.length; k++) off += (starts[k] + rel[k]) * st[k]
    values[off] = block[o++]
  }
}

// bytes codec (little endian; this host is little endian) then gzip.
export function leBytes(typed) {
  return Buffer.from(typed.buffer, typed.byteOffset, typed.byteLength)
}

export function gzip(typed, level = 5) {
  return gzipSync(leBytes(typed), { level })
}

const CRC32C_TABLE = (() => {
  const t = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1
    t[n] = c >>> 0
  }
  return t
})()

export function crc32c(buf) {
  let c = 0xffffffff
  for (const b of buf) c = CRC32C_TABLE[(c ^ b) & 0xff] ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

// sharding_indexed shard, index at the end with codecs [bytes little, crc32c]. `inner` is a list
// (C order over the shard's inner grid) of encoded chunks or null for an empty inner chunk.
export function encodeShard(inner) {
  const index = Buffer.alloc(inner.length * 16)
  const parts = []
  let offset = 0n
  inner.forEach((bytes, i) => {
    if (bytes === null) {
      index.writeBigUInt64LE(0xffffffffffffffffn, i * 16)
      index.writeBigUInt64LE(0xffffffffffffffffn, i * 16 + 8)
      return
    }
    index.writeBigUInt64LE(offset, i * 16)
    index.writeBigUInt64LE(BigInt(bytes.length), i * 16 + 8)
    parts.push(bytes)
    offset += BigInt(bytes.length)
  })
  const crc = Buffer.alloc(4)
  crc.writeUInt32LE(crc32c(index))
  return Buffer.concat([...parts, index, crc])
}

const NPY_DESCR = {
  Float32Array: '<f4',
  Float64Array: '<f8',
  Int16Array: '<i2',
  Uint16Array: '<u2',
  Int32Array: '<i4',
  Uint8Array: '|u1',
}

// A .npy (format 1.0) file's bytes for a C-order typed array.
export function npyBytes(typed, shape) {
  const descr = NPY_DESCR[typed.constructor.name]
  if (!descr) throw new Error(`npy: no dtype for ${typed.constructor.name}`)
  const shp = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shp}, }`
  const total = 10 + header.length + 1
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n'
  const pre = Buffer.alloc(10)
  Buffer.from([0x93]).copy(pre, 0)
  pre.write('NUMPY', 1, 'latin1')
  pre[6] = 1
  pre[7] = 0
  pre.writeUInt16LE(header.length, 8)
  return Buffer.concat([pre, Buffer.from(header, 'latin1'), leBytes(typed)])
}
