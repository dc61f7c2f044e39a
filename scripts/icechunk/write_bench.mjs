// Benchmark data for the Icechunk rows of `make bench` (bench/icechunk_e2e.py), written by the real
// Icechunk (npm @earthmover/icechunk) in the Debian 13 chroot; run by scripts/icechunk/make_bench_data.sh
// after make_netcdf.py and write_fixtures.mjs (the virtual fixture).
//
// usage: node write_bench.mjs OUTDIR FIXTURES     (FIXTURES/nc/chunks.json must exist)
// Writes:
//   OUTDIR/bench.icechunk  a repository: /t2m float32 1024 x 1024, regular 64 x 64 chunks (256),
//                          codecs bytes + gzip level 5, deterministic values
//   OUTDIR/bench.zarr      the same array as a plain Zarr v3 store: the same zarr.json and the
//                          same chunk bytes, so the two differ only in how they are found
//   OUTDIR/t2m.f32         the values, little-endian float32, C order
//   OUTDIR/virtual_s3.icechunk  the monthly NetCDF-4 files of FIXTURES/nc as one virtual array /t2m
//                          whose references are s3://zarr3-bench/<file> (a declared container), so
//                          the bench can serve the files over HTTP (AWS_S3_ENDPOINT) behind the proxy
//   OUTDIR/bench.json      what was written
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { basename, join, resolve } from 'node:path'
import { arrayMeta, groupMeta } from './fixture_model.mjs'
import { extractBlock, gzip, leBytes } from './zarr_encode.mjs'

const require = createRequire(import.meta.url)
const { Storage, Repository } = require('@earthmover/icechunk')

const N = 1024
const C = 64
const BYTES_LE = { name: 'bytes', configuration: { endian: 'little' } }
const GZIP = { name: 'gzip', configuration: { level: 5 } }
export const S3_PREFIX = 's3://zarr3-bench/'

function values() {
  const a = new Float32Array(N * N)
  for (let y = 0; y < N; y++)
    for (let x = 0; x < N; x++) a[y * N + x] = 250 + 0.125 * ((y * 7 + x * 3) % 997) + 0.001 * (x % 13)
  return a
}

// The 256 encoded chunks, keyed "t2m/c/i/j".
function chunks(a) {
  const out = new Map()
  for (let i = 0; i < N / C; i++)
    for (let j = 0; j < N / C; j++) out.set(`t2m/c/${i}/${j}`, gzip(extractBlock(a, [N, N], [i * C, j * C], [C, C])))
  return out
}

async function benchRepo(out, meta, encoded) {
  const dir = join(out, 'bench.icechunk')
  const repo = await Repository.create(await Storage.newLocalFilesystem(dir), null, 2)
  const s = await repo.writableSession('main')
  await s.store.set('zarr.json', groupMeta({ title: 'benchmark: 256 chunks' }))
  await s.store.set('t2m/zarr.json', Buffer.from(JSON.stringify(meta)))
  for (const [key, bytes] of encoded) await s.store.set(key, bytes)
  return s.commit('256 chunks of 64 x 64 float32, gzip')
}

function plainStore(out, meta, encoded) {
  const dir = join(out, 'bench.zarr')
  mkdirSync(join(dir, 't2m'), { recursive: true })
  writeFileSync(join(dir, 'zarr.json'), groupMeta({ title: 'benchmark: 256 chunks' }))
  writeFileSync(join(dir, 't2m', 'zarr.json'), JSON.stringify(meta))
  for (const [key, bytes] of encoded) {
    mkdirSync(join(dir, ...key.split('/').slice(0, -1)), { recursive: true })
    writeFileSync(join(dir, ...key.split('/')), bytes)
  }
}

async function virtualS3(out, nc) {
  const dir = join(out, 'virtual_s3.icechunk')
  const containers = { virtualChunkContainers: {
    [S3_PREFIX]: { urlPrefix: S3_PREFIX, store: { type: 'S3', field0: { region: 'us-east-1', anonymous: true } } },
  } }
  const repo = await Repository.create(await Storage.newLocalFilesystem(dir), containers, 2)
  await repo.saveConfig()
  const [, nlat, nlon] = nc.shape
  const latChunk = nc.files[0].hdf5_chunk_shape[1]
  const latChunks = []
  for (let s = 0; s < nlat; s += latChunk) latChunks.push(Math.min(latChunk, nlat - s))
  const meta = arrayMeta({ shape: nc.shape, dtype: 'float32',
    chunkShapes: [nc.files.map((f) => f.ndays), latChunks, [nlon]],
    codecs: [BYTES_LE, { name: 'numcodecs.shuffle', configuration: { elementsize: 4 } },
      { name: 'numcodecs.zlib', configuration: { level: 4 } }],
    fill: nc.fill_value, dims: ['time', 'lat', 'lon'], attrs: { units: 'K' } })
  const s = await repo.writableSession('main')
  await s.store.set('zarr.json', groupMeta({ title: 'monthly NetCDF-4 files over s3://' }))
  await s.store.set('t2m/zarr.json', Buffer.from(JSON.stringify(meta)))
  for (const [m, f] of nc.files.entries())
    for (const c of f.chunks)
      await s.store.setVirtualRef(`t2m/c/${m}/${c.chunk_offset[1] / latChunk}/0`, `${S3_PREFIX}${basename(f.path)}`,
        c.byte_offset, c.size, null, null, true)
  return s.commit('virtual references into 3 monthly NetCDF-4 files (s3://)')
}

async function main() {
  const [outArg, fxArg] = process.argv.slice(2)
  if (!outArg || !fxArg) throw new Error('usage: node write_bench.mjs OUTDIR FIXTURES')
  const out = resolve(outArg)
  const nc = JSON.parse(readFileSync(join(resolve(fxArg), 'nc', 'chunks.json'), 'utf8'))
  mkdirSync(out, { recursive: true })
  const a = values()
  const meta = arrayMeta({ shape: [N, N], dtype: 'float32', regular: [C, C], codecs: [BYTES_LE, GZIP], fill: 0,
    dims: ['y', 'x'], attrs: {} })
  const encoded = chunks(a)
  const snap = await benchRepo(out, meta, encoded)
  plainStore(out, meta, encoded)
  writeFileSync(join(out, 't2m.f32'), leBytes(a))
  const vsnap = await virtualS3(out, nc)
  writeFileSync(join(out, 'bench.json'), JSON.stringify({ shape: [N, N], chunk: [C, C], chunks: encoded.size,
    snapshot: snap, virtual_s3: { snapshot: vsnap, prefix: S3_PREFIX, files: nc.files.map((f) => f.path) } }, null, 1))
  console.log(`bench data: ${encoded.size} chunks in bench.icechunk and bench.zarr, virtual_s3.icechunk`)
}

main().catch((e) => { console.error(e?.stack ?? String(e)); process.exit(1) })
