// The Icechunk sample repositories of data/ (see make_samples.sh), written by the real Icechunk (npm
// @earthmover/icechunk) in the Debian 13 chroot after make_sample_netcdf.py.
//
// usage: node write_samples.mjs SRC OUT
//   SRC: the source values (check_samples.py source).
// Writes OUT/t2m_2023q1.icechunk (three monthly commits, tag january, branch qc with a correction)
// and OUT/samples.json (snapshots, the correction) for the host-side check. data/archive.icechunk is
// not written here: make_samples.sh runs `zarr3 virtualize` on the NetCDF files (issue 42).
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { arrayMeta, groupMeta } from './fixture_model.mjs'
import { extractBlock, leBytes } from './zarr_encode.mjs'

const require = createRequire(import.meta.url)
const { Storage, Repository } = require('@earthmover/icechunk')

const json = (o) => Buffer.from(JSON.stringify(o, null, 1))
const BYTES_LE = { name: 'bytes', configuration: { endian: 'little' } }
const SHUFFLE4 = { name: 'numcodecs.shuffle', configuration: { elementsize: 4 } }
const Q1_CODECS = [BYTES_LE, SHUFFLE4, { name: 'gzip', configuration: { level: 6 } }]
const COORD_CODECS = [BYTES_LE, { name: 'gzip', configuration: { level: 6 } }]
const SPATIAL = [[16, 16], [32, 32]] // lat, lon chunks of /t2m (the NetCDF files' HDF5 chunks)
// branch qc: one correction of the February chunk (lat 0-15, lon 0-31) on 2023-02-14
const QC = { day_index: 44, date: '2023-02-14', rows: [0, 16], cols: [0, 32], delta: -1.5 }
const TYPES = { '<f4': Float32Array, '<f8': Float64Array, '<i8': BigInt64Array, '<i4': Int32Array }

function loadSource(src) {
  const doc = JSON.parse(readFileSync(join(src, 'source.json'), 'utf8'))
  const arrays = {}
  for (const [name, a] of Object.entries(doc.arrays)) {
    const b = readFileSync(join(src, `${name}.bin`))
    const Ctor = TYPES[a.dtype]
    arrays[name] = new Ctor(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength))
  }
  return { doc, arrays }
}

// numcodecs.shuffle (= HDF5 shuffle): byte j of element i goes to j * count + i.
function shuffle(buf, size) {
  const n = buf.length / size
  const out = Buffer.alloc(buf.length)
  for (let i = 0; i < n; i++) for (let j = 0; j < size; j++) out[j * n + i] = buf[i * size + j]
  return out
}

const encodeQ1 = (typed) => gzipSync(shuffle(leBytes(typed), 4), { level: 6 })

// zarr.json of every node for `days` days; t2m on `t2mCodecs` with time chunks `months`.
function nodes(doc, months, t2mCodecs) {
  const a = doc.arrays
  const days = months.reduce((x, y) => x + y, 0)
  const [, nlat, nlon] = a.t2m.shape
  const meta = (name, shape, dtype, grid, codecs, fill, dims) => arrayMeta({ shape, dtype, ...grid, codecs, fill,
    dims, attrs: a[name].attributes })
  return {
    t2m: meta('t2m', [days, nlat, nlon], 'float32', { chunkShapes: [months, ...SPATIAL] }, t2mCodecs, 'NaN',
      ['time', 'lat', 'lon']),
    time: meta('time', [days], 'int64', { chunkShapes: [months] }, COORD_CODECS, 0, ['time']),
    lat: meta('lat', [nlat], 'float64', { regular: [nlat] }, COORD_CODECS, 0, ['lat']),
    lon: meta('lon', [nlon], 'float64', { regular: [nlon] }, COORD_CODECS, 0, ['lon']),
    spatial_ref: meta('spatial_ref', [], 'int32', { regular: [] }, COORD_CODECS, 0, undefined),
  }
}

async function setNodes(store, doc, months, t2mCodecs, which) {
  const all = nodes(doc, months, t2mCodecs)
  for (const name of which) await store.set(`${name}/zarr.json`, json(all[name]))
}

const gz = (typed) => gzipSync(leBytes(typed), { level: 6 })

async function setCoords(store, arrays, months, { month = null } = {}) {
  let start = 0
  for (const [m, n] of months.entries()) {
    if (month === null || m === month) await store.set(`time/c/${m}`, gz(arrays.time.slice(start, start + n)))
    start += n
  }
  if (month !== null && month !== 0) return
  await store.set('lat/c/0', gz(arrays.lat))
  await store.set('lon/c/0', gz(arrays.lon))
  await store.set('spatial_ref/c', gz(arrays.spatial_ref))
}

// The four t2m chunks of one month (time chunk m) from `values` (the 90-day array).
async function setMonth(store, values, shape, months, m) {
  const start = months.slice(0, m).reduce((x, y) => x + y, 0)
  for (const [i, [y0, ny]] of [[0, 16], [16, 16]].entries())
    for (const [j, [x0, nx]] of [[0, 32], [32, 32]].entries()) {
      const block = extractBlock(values, shape, [start, y0, x0], [months[m], ny, nx])
      await store.set(`t2m/c/${m}/${i}/${j}`, encodeQ1(block))
    }
}

async function writeQ1(out, doc, arrays) {
  const months = doc.months
  const shape = doc.arrays.t2m.shape
  const repo = await Repository.create(await Storage.newLocalFilesystem(join(out, 't2m_2023q1.icechunk')), null, 2)
  const names = ['January', 'February', 'March']
  const snapshots = []
  for (let m = 0; m < months.length; m++) {
    const s = await repo.writableSession('main')
    const upTo = months.slice(0, m + 1)
    if (m === 0) {
      await s.store.set('zarr.json', groupMeta({ ...doc.group_attributes,
        title: 'Daily 2 m temperature, 2023-01..03 (gdal-zarr3 Icechunk sample)',
        source: 'scripts/icechunk/make_samples.sh from data/daily_t2m_2023.zarr' }))
      await setNodes(s.store, doc, upTo, Q1_CODECS, ['t2m', 'time', 'lat', 'lon', 'spatial_ref'])
      await setCoords(s.store, arrays, upTo)
    } else {
      await setNodes(s.store, doc, upTo, Q1_CODECS, ['t2m', 'time'])
      await setCoords(s.store, arrays, upTo, { month: m })
    }
    await setMonth(s.store, arrays.t2m, shape, months, m)
    const days = upTo.reduce((x, y) => x + y, 0)
    const message = m === 0 ? `January 2023 created: /t2m days 1-31 (time chunk 0, 31 days)`
      : `${names[m]} 2023 appended: /t2m days ${days - months[m] + 1}-${days} (time chunk ${m}, ${months[m]} days)`
    snapshots.push({ id: await s.commit(message), branch: 'main', message, days })
  }
  await repo.createTag('january', snapshots[0].id)
  await repo.createBranch('qc', snapshots[2].id)
  const fixed = Float32Array.from(arrays.t2m)
  const [, ny, nx] = shape
  for (let y = QC.rows[0]; y < QC.rows[1]; y++)
    for (let x = QC.cols[0]; x < QC.cols[1]; x++) fixed[(QC.day_index * ny + y) * nx + x] += QC.delta
  const s = await repo.writableSession('qc')
  const feb = extractBlock(fixed, shape, [months[0], 0, 0], [months[1], 16, 32])
  await s.store.set('t2m/c/1/0/0', encodeQ1(feb))
  const message = `qc: ${QC.date} north-west block (lat rows 0-15, lon columns 0-31) corrected by ${QC.delta} K`
  snapshots.push({ id: await s.commit(message), branch: 'qc', message, days: 90, qc: QC })
  for (const x of snapshots) console.log(`  t2m_2023q1 ${x.branch.padEnd(4)} ${x.id} ${x.message}`)
  return { snapshots, tags: { january: snapshots[0].id }, branches: { main: snapshots[2].id, qc: snapshots[3].id },
    qc: QC }
}

async function main() {
  const [src, out] = process.argv.slice(2)
  if (!src || !out) throw new Error('usage: node write_samples.mjs SRC OUT')
  const { doc, arrays } = loadSource(src)
  const q1 = await writeQ1(out, doc, arrays)
  const version = JSON.parse(readFileSync(join(dirname(require.resolve('@earthmover/icechunk')), 'package.json'),
    'utf8')).version
  writeFileSync(join(out, 'samples.json'), JSON.stringify({ icechunk: version, t2m_2023q1: q1 }, null, 1))
  console.log(`samples written with @earthmover/icechunk ${version}`)
}

main().catch((e) => { console.error(e?.stack ?? String(e)); process.exit(1) })
