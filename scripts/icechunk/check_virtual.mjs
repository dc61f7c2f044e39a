// Reads a repository written by `zarr3 virtualize` (scripts/icechunk/virtual_repo.sh) with the real
// Icechunk, its file:// container authorized: every key of every snapshot of main is written to
// OUTDIR/<snapshot id>/<key> (a plain Zarr store, as Icechunk's own store returns the keys: virtual
// chunks read from the NetCDF files, copied chunks and coordinates from the repository), which
// autotest/test_icechunk_interop.py::test_virtualize_* reads with GDAL and compares with the
// netCDF driver.
// usage: node check_virtual.mjs REPO PREFIX OUTDIR [tip]  -> {snapshot id: number of keys} on stdout
//   tip: the tip of main only (the relocated sample, whose earlier snapshot names another container)
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { Repository, Storage } from './repo_dump.mjs'

const [dir, prefix, outdir, only] = process.argv.slice(2)
const repo = await Repository.open(await Storage.newLocalFilesystem(dir), null, { [prefix]: null })
const out = {}
const ancestry = await repo.ancestry({ branch: 'main' })
for (const s of only === 'tip' ? ancestry.slice(0, 1) : ancestry) {
  const store = (await repo.readonlySession({ snapshotId: s.id })).store
  let n = 0
  for (const key of await store.list()) {
    const data = await store.get(key)
    if (data === null) continue
    const path = join(outdir, s.id, key)
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, Buffer.from(data))
    n++
  }
  out[s.id] = n
}
console.log(JSON.stringify(out))
