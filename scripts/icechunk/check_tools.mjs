// Reads a repository changed by the zarr3 tools (scripts/icechunk/tools_repo.sh: compactions as
// commits, tags, branches) with the real Icechunk: every branch and tag, the history of every branch,
// every key of every snapshot of a branch's history or a tag (hex); then commits on top of main (the chunks t2m/c/0/... replaced by
// the bytes of t2m/c/2/..., both 31 days; an attribute added), for the plugin to read back.
// usage: node check_tools.mjs REPO  -> JSON report on stdout
import { openLocal, snapshotValues } from './repo_dump.mjs'

const repo = await openLocal(process.argv[2])
const out = { branches: {}, tags: {}, history: {}, snapshots: {} }
for (const b of (await repo.listBranches()).sort()) out.branches[b] = await repo.lookupBranch(b)
for (const t of (await repo.listTags()).sort()) out.tags[t] = await repo.lookupTag(t)
for (const b of Object.keys(out.branches)) {
  const anc = await repo.ancestry({ branch: b })
  out.history[b] = anc.map((s) => ({ id: s.id, message: s.message, parent: s.parentId ?? null }))
  for (const s of anc) {
    if (!out.snapshots[s.id]) out.snapshots[s.id] = await snapshotValues(repo, s.id)
  }
}
// Tagged snapshots no branch's history holds any more (after an expiry) are read too.
for (const id of Object.values(out.tags)) {
  if (!out.snapshots[id]) out.snapshots[id] = await snapshotValues(repo, id)
}
const w = await repo.writableSession('main')
for (const key of await w.store.listPrefix('t2m')) {
  if (!key.startsWith('t2m/c/2/')) continue
  await w.store.set(key.replace('t2m/c/2/', 't2m/c/0/'), Buffer.from(await w.store.get(key)))
}
const meta = JSON.parse(Buffer.from(await w.store.get('t2m/zarr.json')).toString('utf8'))
meta.attributes = { ...(meta.attributes ?? {}), icechunk_touched: true }
await w.store.set('t2m/zarr.json', Buffer.from(JSON.stringify(meta)))
out.icechunk_commit = await w.commit('by icechunk: January = March')
console.log(JSON.stringify(out))
