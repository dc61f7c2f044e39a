// Opens repositories left by the fault tests (gtests IcechunkFaults.*, ZARR3_ICECHUNK_FAULTS_OUT) with
// the real Icechunk: every branch points where this library says (DIR/<name>.json), main's history has
// the expected length, and every key of every snapshot of main reads (no missing object).
// usage: node check_open.mjs DIR   (exit 1 naming the first problem)
import { readdirSync, readFileSync } from 'node:fs'
import { openLocal, snapshotValues } from './repo_dump.mjs'

const dir = process.argv[2]
let repos = 0, keys = 0
for (const name of readdirSync(dir).filter((n) => n.endsWith('.json')).sort()) {
  const want = JSON.parse(readFileSync(`${dir}/${name}`, 'utf8'))
  const path = `${dir}/${name.slice(0, -5)}`
  const repo = await openLocal(path)
  const branches = {}
  for (const b of await repo.listBranches()) branches[b] = await repo.lookupBranch(b)
  if (JSON.stringify(branches, Object.keys(branches).sort()) !==
      JSON.stringify(want.branches, Object.keys(want.branches).sort())) {
    console.error(`${path}: branches ${JSON.stringify(branches)} != ${JSON.stringify(want.branches)}`)
    process.exit(1)
  }
  const anc = await repo.ancestry({ branch: 'main' })
  if (anc.length !== want.history) {
    console.error(`${path}: main has ${anc.length} snapshots, expected ${want.history}`)
    process.exit(1)
  }
  for (const s of anc) {
    for (const [key, value] of Object.entries(await snapshotValues(repo, s.id))) {
      if (value === null) {
        console.error(`${path}: ${s.id} ${key} listed but absent`)
        process.exit(1)
      }
      keys++
    }
  }
  repos++
}
if (repos < 2) { console.error(`${dir}: only ${repos} repositories`); process.exit(1) }
console.log(`Icechunk opened ${repos} repositories left by the fault tests, read ${keys} keys`)
