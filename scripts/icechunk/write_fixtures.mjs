// Icechunk repositories written by the real Icechunk (npm @earthmover/icechunk, the Rust library
// behind a Node binding) for autotest/test_icechunk_interop.py.  Run by scripts/icechunk/fixtures_lib.sh
// in the Debian 13 chroot (the binding needs glibc >= 2.38), after make_netcdf.py.
//
// usage: node write_fixtures.mjs OUTDIR      (OUTDIR/nc/chunks.json must exist)
//        node write_fixtures.mjs version
// Writes, for each fixture NAME: OUTDIR/NAME.icechunk (the repository) and OUTDIR/NAME.expected/
// (expected.json: refs, history, timestamps, AS_OF selectors; values/<snapshot>_<array>.npy;
// plain/<snapshot>/: every key of that snapshot as Icechunk's store returns it, a plain Zarr store).
// OUTDIR/fixtures.json lists them.  Fixtures: rect (spec 2, rectilinear, 4 commits, tag, branch),
// shard (rectilinear shard grid), inline (inline + native + absent chunks), virtual (references into
// the NetCDF-4 files; also t2m_checked with last-modified checksums and t2m_s3 in an s3:// container),
// virtual_undeclared (references whose container the config does not declare), spec1 (format 1),
// split (one manifest per row of chunks).
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { ArrayState, Timeline, arrayMeta, dumpPlain, groupMeta, regularToLists } from './fixture_model.mjs'
import { encodeShard, extractBlock, gridIndices, gzip, leBytes } from './zarr_encode.mjs'

const require = createRequire(import.meta.url)
const { Storage, Repository } = require('@earthmover/icechunk')
const ICECHUNK_VERSION = JSON.parse(readFileSync(join(dirname(require.resolve('@earthmover/icechunk')),
  'package.json'), 'utf8')).version

const json = (o) => Buffer.from(JSON.stringify(o))
const BYTES_LE = { name: 'bytes', configuration: { endian: 'little' } }
const GZIP = { name: 'gzip', configuration: { level: 5 } }
const UTM32 = { 'proj:code': 'EPSG:32632', 'spatial:transform': [1000.0, 0.0, 500000.0, 0.0, -1000.0, 5000000.0] }

async function newRepo(dir, specVersion, config) {
  const storage = await Storage.newLocalFilesystem(dir)
  const repo = await Repository.create(storage, config ?? null, specVersion)
  if (config) await repo.saveConfig()
  return repo
}

function filled(n, Ctor, f) {
  const a = new Ctor(n)
  for (let i = 0; i < n; i++) a[i] = f(i)
  return a
}

// (a) time x y x float32, rectilinear, 4 commits on two branches, a tag.
async function rect(out) {
  const dir = join(out, 'rect.icechunk')
  const tl = new Timeline('rect', dir, 2, { gap: true })
  const repo = await newRepo(dir, 2)
  const shape = [5, 6, 9]
  const chunkShapes = [[1, 4], [2, 4], [4, 3, 2]]
  const meta = arrayMeta({ shape, dtype: 'float32', chunkShapes, codecs: [BYTES_LE, GZIP], fill: -9999.0,
    dims: ['time', 'y', 'x'], attrs: { ...UTM32, units: 'K', long_name: 'air temperature' } })
  tl.describeArray('/t2m', meta)
  const n = 5 * 6 * 9
  const tyx = (i) => [Math.floor(i / 54), Math.floor(i / 9) % 6, i % 9]
  const base = filled(n, Float32Array, (i) => { const [t, y, x] = tyx(i); return 280 + 1.5 * t + 0.25 * y + 0.0625 * x })
  const st = new ArrayState('/t2m', shape, chunkShapes, Float32Array, -9999.0, (b) => gzip(b))
  const v = () => ({ '/t2m': [st.values(), shape] })
  const missing = '1,1,2'

  let s = await repo.writableSession('main')
  await s.store.set('zarr.json', groupMeta({ title: 'rect fixture' }))
  await s.store.set('t2m/zarr.json', json(meta))
  for (const idx of st.indices()) if (idx.join(',') !== missing) await st.writeFrom(s.store, idx, base)
  const c1 = await tl.commit(s, 'main', 'c1: create t2m (chunk 1,1,2 absent)', v())

  s = await repo.writableSession('main')
  const plus100 = filled(n, Float32Array, (i) => base[i] + 100)
  for (const idx of st.indices()) if (idx[0] === 0 && idx.join(',') !== missing) await st.writeFrom(s.store, idx, plus100)
  const c2 = await tl.commit(s, 'main', 'c2: first day +100', v())
  await repo.createTag('v1', c2)
  await repo.createBranch('dev', c2)

  const dev = st.clone()
  s = await repo.writableSession('dev')
  const plus1000 = filled(n, Float32Array, (i) => base[i] + 1000)
  await dev.writeFrom(s.store, [1, 1, 2], plus1000)
  const devValues = { '/t2m': [dev.values(), shape] }
  const c3 = await tl.commit(s, 'dev', 'c3 (dev): fill chunk 1,1,2 with +1000', devValues)

  s = await repo.writableSession('main')
  const neg = filled(n, Float32Array, (i) => -base[i])
  for (const idx of st.indices()) if (idx[0] === 1 && idx[1] === 0) await st.writeFrom(s.store, idx, neg)
  await st.remove(s.store, [1, 1, 0])
  const c4 = await tl.commit(s, 'main', 'c4: negate days 1-4 rows 0-1, delete chunk 1,1,0', v())

  await tl.finish(repo, ['main', 'dev'], ['v1'])
  tl.extra.commits = { c1, c2, c3, c4 }
  return finishFixture(repo, tl, [c1, c2, c3, c4])
}

// (b) int16 rectilinear shard grid, sharding_indexed with 4 x 5 inner chunks; two commits (the
// second rewrites shard 0,0 with +500) and a tag v1 on the first, so every selector of the older
// version reads other values than the head.
async function shard(out) {
  const dir = join(out, 'shard.icechunk')
  const tl = new Timeline('shard', dir, 2, { gap: true })
  const repo = await newRepo(dir, 2)
  const shape = [12, 20]
  const chunkShapes = [[4, 8], [5, 10, 5]]
  const inner = [4, 5]
  const fill = -32768
  const sharding = { name: 'sharding_indexed', configuration: { chunk_shape: inner,
    codecs: [BYTES_LE, GZIP], index_codecs: [BYTES_LE, { name: 'crc32c' }], index_location: 'end' } }
  const meta = arrayMeta({ shape, dtype: 'int16', chunkShapes, codecs: [sharding], fill, dims: ['y', 'x'],
    attrs: { ...UTM32, units: 'm' } })
  tl.describeArray('/dem', meta)
  const values = filled(240, Int16Array, (i) => ((Math.floor(i / 20) * 37 + (i % 20) * 11) % 1000) - 200)
  const absentShard = '0,2'
  const emptyInner = '1,1:1,0' // shard 1,1, inner chunk 1,0
  const st = new ArrayState('/dem', shape, chunkShapes, Int16Array, fill, null)
  const expected = new Int16Array(240).fill(fill)
  // Shard idx of `vals` into the session's store, and into `exp` what it holds.
  const writeShard = async (store, idx, vals, exp) => {
    const [starts, sizes] = st.region(idx)
    const innerCounts = sizes.map((n, k) => n / inner[k])
    const parts = []
    for (const j of gridIndices(innerCounts)) {
      if (`${idx.join(',')}:${j.join(',')}` === emptyInner) { parts.push(null); continue }
      const s0 = starts.map((a, k) => a + j[k] * inner[k])
      const block = extractBlock(vals, shape, s0, inner)
      parts.push(gzip(block))
      for (let r = 0; r < inner[0]; r++) for (let c = 0; c < inner[1]; c++) exp[(s0[0] + r) * 20 + s0[1] + c] = block[r * inner[1] + c]
    }
    await store.set(st.key(idx), encodeShard(parts))
  }
  let s = await repo.writableSession('main')
  await s.store.set('zarr.json', groupMeta({}))
  await s.store.set('dem/zarr.json', json(meta))
  for (const idx of st.indices()) {
    if (idx.join(',') !== absentShard) await writeShard(s.store, idx, values, expected)
  }
  const c1 = await tl.commit(s, 'main', 'dem: rectilinear shards (shard 0,2 absent, one inner chunk empty)',
    { '/dem': [expected, shape] })
  await repo.createTag('v1', c1)
  s = await repo.writableSession('main')
  const expected2 = Int16Array.from(expected)
  await writeShard(s.store, [0, 0], filled(240, Int16Array, (i) => values[i] + 500), expected2)
  const c2 = await tl.commit(s, 'main', 'dem: shard 0,0 rewritten (+500)', { '/dem': [expected2, shape] })
  await tl.finish(repo, ['main'], ['v1'])
  tl.extra.absent_shard = absentShard
  tl.extra.empty_inner_chunk = emptyInner
  tl.extra.commits = { c1, c2 }
  return finishFixture(repo, tl, [c1, c2])
}

// (c) uint16 with chunks small enough for Icechunk to store inline (<= 512 bytes), native ones
// and an absent one.
async function inline(out) {
  const dir = join(out, 'inline.icechunk')
  const tl = new Timeline('inline', dir, 2)
  const threshold = 512
  const repo = await newRepo(dir, 2, { inlineChunkThresholdBytes: threshold })
  const shape = [40, 20]
  const chunkShapes = [[4, 30, 6], [10, 10]]
  const meta = arrayMeta({ shape, dtype: 'uint16', chunkShapes, codecs: [BYTES_LE], fill: 65535, dims: ['y', 'x'] })
  tl.describeArray('/grids/mixed', meta)
  const values = filled(800, Uint16Array, (i) => i)
  const st = new ArrayState('/grids/mixed', shape, chunkShapes, Uint16Array, 65535, leBytes)
  let s = await repo.writableSession('main')
  await s.store.set('zarr.json', groupMeta({}))
  await s.store.set('grids/zarr.json', groupMeta({ description: 'nested group' }))
  await s.store.set('grids/mixed/zarr.json', json(meta))
  const sizes = {}
  for (const idx of st.indices()) {
    if (idx.join(',') === '2,1') continue
    await st.writeFrom(s.store, idx, values)
    const [, sz] = st.region(idx)
    sizes[idx.join(',')] = sz[0] * sz[1] * 2
  }
  const c1 = await tl.commit(s, 'main', 'inline, native and absent chunks', { '/grids/mixed': [st.values(), shape] })
  await tl.finish(repo, ['main'], [])
  let nativeFiles = 0
  try { nativeFiles = readdirSync(join(dir, 'chunks')).length } catch { nativeFiles = 0 }
  const wantNative = Object.values(sizes).filter((b) => b > threshold).length
  if (nativeFiles !== wantNative) throw new Error(`inline: ${nativeFiles} native chunk files, want ${wantNative}`)
  tl.extra.inline_threshold_bytes = threshold
  tl.extra.chunk_bytes = sizes
  tl.extra.native_chunk_files = nativeFiles
  tl.extra.absent_chunk = '2,1'
  return finishFixture(repo, tl, [c1])
}

// (d) virtual references into the monthly NetCDF-4 files (one rectilinear array, time chunks 31, 28, 31).
async function virtual(out, nc, { declare = true } = {}) {
  const name = declare ? 'virtual' : 'virtual_undeclared'
  const dir = join(out, `${name}.icechunk`)
  const tl = new Timeline(name, dir, 2)
  const ncDir = resolve(out, 'nc')
  const prefix = `file://${ncDir}/`
  const s3prefix = 's3://zarr3-icechunk-fixture/'
  const containers = declare ? { virtualChunkContainers: {
    [prefix]: { urlPrefix: prefix, store: { type: 'LocalFileSystem', field0: ncDir } },
    [s3prefix]: { urlPrefix: s3prefix, store: { type: 'S3', field0: { region: 'us-east-1', anonymous: true } } },
  } } : null
  const repo = await newRepo(dir, 2, containers)
  const [ntime, nlat, nlon] = nc.shape
  const hdf5Codecs = [BYTES_LE, { name: 'numcodecs.shuffle', configuration: { elementsize: 4 } },
    { name: 'numcodecs.zlib', configuration: { level: 4 } }]
  const latChunk = nc.files[0].hdf5_chunk_shape[1]
  const t2mMeta = (days) => arrayMeta({ shape: [days.reduce((a, b) => a + b, 0), nlat, nlon], dtype: 'float32',
    chunkShapes: [days, regularToLists([nlat], [latChunk])[0], [nlon]], codecs: hdf5Codecs, fill: nc.fill_value,
    dims: ['time', 'lat', 'lon'], attrs: { units: 'K', long_name: '2 metre temperature' } })
  const meta = t2mMeta(nc.files.map((f) => f.ndays))
  tl.describeArray('/t2m', meta)
  const full = new Float32Array(readNpyF32(join(ncDir, 't2m_expected.npy')))
  const s = await repo.writableSession('main')
  const st = s.store
  await st.set('zarr.json', groupMeta({ title: 'monthly NetCDF-4 files as one virtual array' }))
  await st.set('t2m/zarr.json', json(meta))
  const refs = []
  const setRefs = async (arr, files, urlOf, lastModified) => {
    for (const [m, f] of files.entries())
      for (const c of f.chunks) {
        const key = `${arr}/c/${m}/${c.chunk_offset[1] / latChunk}/0`
        await st.setVirtualRef(key, urlOf(f), c.byte_offset, c.size, null, lastModified(f), declare)
        refs.push({ key, url: urlOf(f), offset: c.byte_offset, length: c.size })
      }
  }
  await setRefs('t2m', nc.files, (f) => `file://${f.path}`, () => null)
  // 1-D coordinates as native chunks
  const coord = async (path, values, dtype, chunks, attrs) => {
    const m = arrayMeta({ shape: [values.length], dtype, chunkShapes: [chunks], codecs: [BYTES_LE], fill: 0,
      dims: [path], attrs })
    await st.set(`${path}/zarr.json`, json(m))
    let o = 0
    for (const [i, n] of chunks.entries()) { await st.set(`${path}/c/${i}`, leBytes(values.slice(o, o + n))); o += n }
    tl.describeArray(`/${path}`, m)
  }
  await coord('time', Int32Array.from(nc.time), 'int32', nc.files.map((f) => f.ndays),
    { units: 'days since 2023-01-01', calendar: 'standard', standard_name: 'time' })
  await coord('lat', Float64Array.from(nc.lat), 'float64', [nlat], { units: 'degrees_north', standard_name: 'latitude' })
  await coord('lon', Float64Array.from(nc.lon), 'float64', [nlon], { units: 'degrees_east', standard_name: 'longitude' })
  const values = { '/t2m': [full, nc.shape], '/time': [Int32Array.from(nc.time), [ntime]],
    '/lat': [Float64Array.from(nc.lat), [nlat]], '/lon': [Float64Array.from(nc.lon), [nlon]] }
  if (declare) {
    const jan = nc.files[0]
    const janValues = full.slice(0, jan.ndays * nlat * nlon)
    // last-modified checksum: the copy's mtime when the reference was made
    const checkedUrl = `file://${nc.checked_copy}`
    const mtime = new Date(Math.ceil(statSync(nc.checked_copy).mtimeMs / 1000) * 1000)
    await st.set('t2m_checked/zarr.json', json(t2mMeta([jan.ndays])))
    await setRefs('t2m_checked', [jan], () => checkedUrl, () => mtime)
    await st.set('t2m_s3/zarr.json', json(t2mMeta([jan.ndays])))
    await setRefs('t2m_s3', [jan], (f) => `${s3prefix}t2m_2023-01.nc`, () => null)
    values['/t2m_checked'] = [janValues, [jan.ndays, nlat, nlon]]
    tl.extra.checked = { array: '/t2m_checked', url: checkedUrl, last_modified: mtime.toISOString() }
    tl.extra.s3 = { array: '/t2m_s3', prefix: s3prefix }
  }
  const c1 = await tl.commit(s, 'main', declare ? 'virtual references into 3 monthly NetCDF-4 files'
    : 'virtual references, container not declared', values)
  await tl.finish(repo, ['main'], [])
  tl.extra.containers = declare ? [prefix, s3prefix] : []
  tl.extra.file_prefix = prefix
  tl.extra.netcdf_files = nc.files.map((f) => f.path)
  tl.extra.virtual_refs = refs
  if (!declare) return finishFixture(repo, tl, [])
  // the dump follows the references: Icechunk must be allowed to read the file:// container
  const reader = await Repository.open(await Storage.newLocalFilesystem(dir), null, { [prefix]: null })
  const dumpAll = await finishFixture(reader, tl, [], false)
  await dumpPlain(reader, c1, join(tl.outDir(), 'plain', c1), ['t2m_s3/'])
  return dumpAll
}

// (f) manifests split by extent: one manifest per row of chunks (Icechunk's manifest splitting).
async function split(out) {
  const dir = join(out, 'split.icechunk')
  const tl = new Timeline('split', dir, 2)
  const splitting = { split_sizes: [[{ path_matches: { regex: '.*' } }, [{ condition: { Axis: 0 }, num_chunks: 1 }]]] }
  const repo = await newRepo(dir, 2, { manifest: { splitting } })
  const shape = [12, 16]
  const chunkShapes = [[2, 3, 3, 4], [5, 5, 6]]
  const meta = arrayMeta({ shape, dtype: 'float32', chunkShapes, codecs: [BYTES_LE, GZIP], fill: 0, dims: ['y', 'x'],
    attrs: UTM32 })
  tl.describeArray('/t2m', meta)
  const values = filled(192, Float32Array, (i) => 1000 + i * 0.25)
  const st = new ArrayState('/t2m', shape, chunkShapes, Float32Array, 0, (b) => gzip(b))
  const s = await repo.writableSession('main')
  await s.store.set('zarr.json', groupMeta({}))
  await s.store.set('t2m/zarr.json', json(meta))
  for (const idx of st.indices()) await st.writeFrom(s.store, idx, values)
  const c1 = await tl.commit(s, 'main', 'one manifest per chunk row', { '/t2m': [st.values(), shape] })
  await tl.finish(repo, ['main'], [])
  const manifests = await repo.lookupManifestFiles(c1)
  if (manifests.length !== chunkShapes[0].length)
    throw new Error(`split: ${manifests.length} manifests, want ${chunkShapes[0].length}`)
  tl.extra.manifests = manifests.map((m) => ({ id: m.id, size_bytes: m.sizeBytes, chunk_refs: m.numChunkRefs }))
  return finishFixture(repo, tl, [c1])
}

// (e) a spec-1 repository (Icechunk 1.x on-disk format, written by Icechunk 2 in compatibility mode).
async function spec1(out) {
  const dir = join(out, 'spec1.icechunk')
  const tl = new Timeline('spec1', dir, 1, { gap: true })
  const repo = await newRepo(dir, 1)
  const shape = [4, 6]
  const chunk = [2, 3]
  const meta = arrayMeta({ shape, dtype: 'float32', regular: chunk, codecs: [BYTES_LE, GZIP], fill: 0,
    dims: ['y', 'x'], attrs: UTM32 })
  tl.describeArray('/t2m', meta)
  const a = filled(24, Float32Array, (i) => i * 0.5)
  const st = new ArrayState('/t2m', shape, regularToLists(shape, chunk), Float32Array, 0, (b) => gzip(b))
  let s = await repo.writableSession('main')
  await s.store.set('zarr.json', groupMeta({}))
  await s.store.set('t2m/zarr.json', json(meta))
  for (const idx of st.indices()) await st.writeFrom(s.store, idx, a)
  const c1 = await tl.commit(s, 'main', 'spec1 c1', { '/t2m': [st.values(), shape] })
  await repo.createTag('v1', c1)
  await repo.createBranch('dev', c1)
  const dev = st.clone()
  s = await repo.writableSession('dev')
  await dev.writeFrom(s.store, [1, 1], filled(24, Float32Array, (i) => -i))
  const c2 = await tl.commit(s, 'dev', 'spec1 c2 (dev): chunk 1,1 negated', { '/t2m': [dev.values(), shape] })
  s = await repo.writableSession('main')
  await st.writeFrom(s.store, [0, 0], filled(24, Float32Array, (i) => i + 1000))
  const c3 = await tl.commit(s, 'main', 'spec1 c3: chunk 0,0 +1000', { '/t2m': [st.values(), shape] })
  await tl.finish(repo, ['main', 'dev'], ['v1'])
  tl.extra.commits = { c1, c2, c3 }
  return finishFixture(repo, tl, [c1, c2, c3])
}

async function finishFixture(repo, tl, dumpIds, write = true) {
  const doc = tl.write()
  for (const id of dumpIds) await dumpPlain(repo, id, join(tl.outDir(), 'plain', id))
  if (write) console.log(`  ${tl.name}: ${tl.snapshots.length} snapshots, branches ${Object.keys(tl.branches)}`)
  return { name: tl.name, repo: tl.repoDir, expected: join(tl.outDir(), 'expected.json'), spec_version: doc.spec_version }
}

function readNpyF32(path) {
  const b = readFileSync(path)
  const hlen = b.readUInt16LE(8)
  const header = b.subarray(10, 10 + hlen).toString('latin1')
  if (!header.includes("'<f4'")) throw new Error(`${path}: not little-endian float32`)
  const data = b.subarray(10 + hlen)
  return new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength))
}

async function main() {
  const out = process.argv[2]
  if (!out) throw new Error('usage: node write_fixtures.mjs OUTDIR | version')
  if (out === 'version') { console.log(`@earthmover/icechunk ${ICECHUNK_VERSION}`); return }
  const dir = resolve(out)
  const nc = JSON.parse(readFileSync(join(dir, 'nc', 'chunks.json'), 'utf8'))
  const t0 = Date.now()
  // concurrently: the commit gaps of rect and spec1 overlap
  const list = await Promise.all([rect(dir), shard(dir), inline(dir), virtual(dir, nc),
    virtual(dir, nc, { declare: false }), spec1(dir), split(dir)])
  writeFileSync(join(dir, 'fixtures.json'), JSON.stringify({ icechunk: ICECHUNK_VERSION, fixtures: list }, null, 1))
  console.log(`icechunk fixtures (${ICECHUNK_VERSION}) written in ${((Date.now() - t0) / 1000).toFixed(1)}s`)
}

main().catch((e) => { console.error(e?.stack ?? String(e)); process.exit(1) })
