// Reads a repository written by gdal-zarr3 (IcechunkWrite.InteropWrite) with the real Icechunk:
// refs, history, every key of every snapshot of main (hex), then commits on top of main.
// usage: node check_written.mjs REPO  -> JSON report on stdout
import { openLocal, snapshotValues } from './repo_dump.mjs'

const repo = await openLocal(process.argv[2])
const out = { branches: {}, tags: {}, snapshots: {} }
for (const b of ['main', 'dev']) out.branches[b] = await repo.lookupBranch(b)
out.tags.v1 = await repo.lookupTag('v1')
const anc = await repo.ancestry({ branch: 'main' })
out.history = anc.map((s) => ({ id: s.id, message: s.message, parent: s.parentId ?? null, at: s.writtenAt }))
for (const s of anc) out.snapshots[s.id] = await snapshotValues(repo, s.id)
const w = await repo.writableSession('main')
await w.store.set('r/c/0', Buffer.from(new Float32Array([1000, 1001]).buffer))
out.icechunk_commit = await w.commit('by icechunk')
console.log(JSON.stringify(out, null, 1))
