// Issue 39.5: the real Icechunk moves the array g/a that gdal-zarr3 wrote (gtest
// IcechunkMoveInterop.Write) to g/b, in a rearrange session (moveNode) committed on main.
// IcechunkMoveInterop.Check then commits changes to g/a from a session opened before the move.
// usage: node move_written.mjs REPO  -> JSON report on stdout
import { openLocal } from './repo_dump.mjs'

const repo = await openLocal(process.argv[2])
const before = await repo.lookupBranch('main')
const s = await repo.rearrangeSession('main')
const node = await s.getNodeId('/g/a')
await s.moveNode('/g/a', '/g/b')
const commit = await s.commit('move /g/a to /g/b by icechunk')
const after = await repo.readonlySession({ branch: 'main' })
const keys = (await after.store.list()).sort()
console.log(JSON.stringify({ before, commit, node, keys }))
