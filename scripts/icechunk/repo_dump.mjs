// What the check scripts share: a local repository opened with the real Icechunk, and every key of one
// snapshot read back (absent keys as null, values as hex or only counted).
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
export const { Storage, Repository } = require('@earthmover/icechunk')

export async function openLocal(dir) {
  return Repository.open(await Storage.newLocalFilesystem(dir))
}

// { key: hex string, or null for a key listed but absent } of snapshot `id`.
export async function snapshotValues(repo, id) {
  const session = await repo.readonlySession({ snapshotId: id })
  const vals = {}
  for (const key of await session.store.list()) {
    const data = await session.store.get(key)
    vals[key] = data === null ? null : Buffer.from(data).toString('hex')
  }
  return vals
}
