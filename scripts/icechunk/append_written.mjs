// Issue 40.5: the real Icechunk appends one day to the array t that gdal-zarr3 appended to
// (gtest IcechunkAppendInterop.Write): it reads t/zarr.json, adds one chunk edge of 1 to the time
// axis of its rectilinear chunk_shapes, sets it (Icechunk parses chunk_shapes here), writes the new
// chunk (bytes codec, little-endian float32: day 3 is 300..305) and commits.
// usage: node append_written.mjs REPO  -> JSON report on stdout
import { openLocal } from './repo_dump.mjs'

const repo = await openLocal(process.argv[2])
const w = await repo.writableSession('main')
const meta = JSON.parse(Buffer.from(await w.store.get('t/zarr.json')).toString())
const before = JSON.parse(JSON.stringify(meta.chunk_grid))
meta.shape[0] += 1
meta.chunk_grid.configuration.chunk_shapes[0].push(1)
await w.store.set('t/zarr.json', Buffer.from(JSON.stringify(meta)))
await w.store.set('t/c/2/0/0', Buffer.from(new Float32Array([300, 301, 302, 303, 304, 305]).buffer))
const commit = await w.commit('day 3 by icechunk')
console.log(JSON.stringify({ grid_before: before, grid_after: meta.chunk_grid, commit }))
