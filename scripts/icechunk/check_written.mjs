// Reads a repository written by gdal-zarr3 (IcechunkWrite.InteropWrite) with the real Icechunk:
// refs, history, every key of every snapshot of main (hex), then commits on top of main.
// usage: node check_written.mjs REPO  -> JSON report on stdout
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Storage, Repository } = require('@earthmover/icechunk')
const dir = process.argv[2]
const repo = await Repository.open(await Storage.newLocalFilesystem(dir))
const out = { branches: {}, tags: {}, snapshots: {} }
for (const b of ['main', 'dev']) out.branches[b] = await repo.lookupBranch(b)
out.tags.v1 = await repo.lookupTag('v1')
const anc = await repo.ancestry({ branch: 'main' })
out.history = anc.map((s) => ({ id: s.id, message: s.message, parent: s.parentId ?? null, at: s.writtenAt }))
for (const s of anc) {
  const session = await repo.readonlySession({ snapshotId: s.id })
  const vals = {}
  for (const key of await session.store.list()) {
    const data = await session.store.get(key)
    vals[key] = data === null ? null : Buffer.from(data).toString('hex')
  }
  out.snapshots[s.id] = vals
}
const w = await repo.writableSession('main')
await w.store.set('r/c/0', Buffer.from(new Float32Array([1000, 1001]).buffer))
out.icechunk_commit = await w.commit('by icechunk')
console.log(JSON.stringify(out, null, 1))
