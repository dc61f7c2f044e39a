// Bookkeeping for write_fixtures.mjs: what each array holds after each commit (the expected
// values), snapshot timelines, .npy/JSON output and a plain-Zarr dump of a snapshot made by
// Icechunk itself (for the self-check that the fixtures decode as expected).
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { axisEdges, extractBlock, gridIndices, npyBytes, placeBlock } from './zarr_encode.mjs'

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
// Commits are spaced so that a whole second lies between any two: AS_OF with or without
// fractional seconds then selects exactly one snapshot.
export const COMMIT_GAP_MS = 1100

export function arrayMeta({ shape, dtype, chunkShapes, regular, codecs, fill, dims, attrs }) {
  const grid = regular
    ? { name: 'regular', configuration: { chunk_shape: regular } }
    : { name: 'rectilinear', configuration: { kind: 'inline', chunk_shapes: chunkShapes } }
  const m = {
    zarr_format: 3,
    node_type: 'array',
    shape,
    data_type: dtype,
    chunk_grid: grid,
    chunk_key_encoding: { name: 'default', configuration: { separator: '/' } },
    fill_value: fill,
    codecs,
    attributes: attrs ?? {},
  }
  if (dims) m.dimension_names = dims
  return m
}

export function groupMeta(attrs) {
  return Buffer.from(JSON.stringify({ zarr_format: 3, node_type: 'group', attributes: attrs ?? {} }))
}

// Chunk sizes per axis of a regular grid, as lists (the model works on lists only).
export function regularToLists(shape, chunk) {
  return shape.map((n, k) => {
    const out = []
    for (let s = 0; s < n; s += chunk[k]) out.push(Math.min(chunk[k], n - s))
    return out
  })
}

// One array's current chunk contents on one branch (decoded blocks; absent = fill).
export class ArrayState {
  constructor(path, shape, chunkShapes, Ctor, fill, encode) {
    Object.assign(this, { path, shape, Ctor, fill, encode })
    this.edges = axisEdges(chunkShapes)
    this.counts = chunkShapes.map((a) => a.length)
    this.blocks = new Map()
  }

  clone() {
    const c = new ArrayState(this.path, this.shape, [], this.Ctor, this.fill, this.encode)
    c.edges = this.edges
    c.counts = this.counts
    c.blocks = new Map(this.blocks)
    return c
  }

  key(idx) {
    return `${this.path.replace(/^\//, '')}/c/${idx.join('/')}`
  }

  region(idx) {
    return [idx.map((i, k) => this.edges[k][i][0]), idx.map((i, k) => this.edges[k][i][1])]
  }

  *indices() {
    yield* gridIndices(this.counts)
  }

  // Write chunk idx of `full` (a whole-array typed array) through the store.
  async writeFrom(store, idx, full) {
    const [starts, sizes] = this.region(idx)
    const block = extractBlock(full, this.shape, starts, sizes)
    await store.set(this.key(idx), this.encode(block))
    this.blocks.set(idx.join(','), block)
  }

  async remove(store, idx) {
    await store.delete(this.key(idx))
    this.blocks.delete(idx.join(','))
  }

  values() {
    const n = this.shape.reduce((a, b) => a * b, 1)
    const out = new this.Ctor(n).fill(this.fill)
    for (const [k, block] of this.blocks) {
      const [starts, sizes] = this.region(k.split(',').map(Number))
      placeBlock(out, this.shape, starts, sizes, block)
    }
    return out
  }
}

// The expected side of one fixture repository: snapshots, refs, values, AS_OF selectors.
export class Timeline {
  // gap: space commits by COMMIT_GAP_MS (fixtures with AS_OF selectors only)
  constructor(name, repoDir, specVersion, { gap = false } = {}) {
    Object.assign(this, { name, repoDir, specVersion, gap })
    this.snapshots = []
    this.arrays = {}
    this.extra = {}
  }

  describeArray(path, meta) {
    this.arrays[path] = { shape: meta.shape, data_type: meta.data_type, fill_value: meta.fill_value,
      chunk_grid: meta.chunk_grid, codecs: meta.codecs.map((c) => c.name) }
  }

  // Record a snapshot and the values of each array in it ({path: [typedArray, shape]}).
  record(id, branch, message, values) {
    const files = {}
    for (const [path, [typed, shape]] of Object.entries(values)) {
      const rel = `values/${id}${path.replace(/\//g, '_')}.npy`
      const f = join(this.outDir(), rel)
      mkdirSync(dirname(f), { recursive: true })
      writeFileSync(f, npyBytes(typed, shape))
      files[path] = rel
    }
    this.snapshots.push({ id, branch, message, values: files })
  }

  outDir() {
    return join(dirname(this.repoDir), `${this.name}.expected`)
  }

  async commit(session, branch, message, values) {
    if (this.gap) await sleep(COMMIT_GAP_MS)
    const id = await session.commit(message)
    this.record(id, branch, message, values)
    return id
  }

  // Timestamps, parents, refs and AS_OF selectors from the repository itself.
  async finish(repo, branches, tags) {
    this.branches = {}
    for (const b of branches) this.branches[b] = await repo.lookupBranch(b)
    this.tags = {}
    for (const t of tags) this.tags[t] = await repo.lookupTag(t)
    this.history = {}
    for (const b of branches) {
      const anc = await repo.ancestry({ branch: b })
      this.history[b] = anc.map((s) => s.id)
      for (const s of anc) {
        let rec = this.snapshots.find((x) => x.id === s.id)
        if (!rec) {
          rec = { id: s.id, branch: null, message: s.message, values: {} }
          this.snapshots.push(rec)
        }
        Object.assign(rec, { message: s.message, written_at: s.writtenAt, parent: s.parentId ?? null })
      }
    }
    this.asOf = []
    for (const b of branches) this.addAsOf(b)
  }

  // Between each snapshot of a branch and the next one: a time selecting the older one.
  addAsOf(branch) {
    const chain = [...this.history[branch]].reverse() // oldest first
    const at = (id) => Date.parse(this.snapshots.find((s) => s.id === id).written_at)
    for (let k = 0; k < chain.length; k++) {
      const t0 = at(chain[k])
      const t1 = k + 1 < chain.length ? at(chain[k + 1]) : t0 + 3600e3
      const wholeSecond = Math.floor(t0 / 1000) * 1000 + 1000
      this.asOf.push({
        branch,
        as_of: new Date(Math.floor((t0 + t1) / 2)).toISOString(),
        as_of_seconds: wholeSecond < t1 - 1 ? new Date(wholeSecond).toISOString().replace('.000Z', 'Z') : null,
        expect: chain[k],
      })
    }
    const before = at(chain[0]) - 3600e3
    this.asOf.push({ branch, as_of: new Date(before).toISOString(), as_of_seconds: null, expect: null })
  }

  write() {
    const doc = {
      fixture: this.name,
      repo: this.repoDir,
      spec_version: this.specVersion,
      arrays: this.arrays,
      branches: this.branches,
      tags: this.tags,
      history: this.history,
      snapshots: this.snapshots,
      as_of: this.asOf,
      ...this.extra,
    }
    mkdirSync(this.outDir(), { recursive: true })
    writeFileSync(join(this.outDir(), 'expected.json'), JSON.stringify(doc, null, 1))
    return doc
  }
}

// Copy every key of a snapshot, as Icechunk's store returns it, into a plain Zarr folder.
// Keys under a prefix in `skip` are left out (references Icechunk may not follow here).
export async function dumpPlain(repo, snapshotId, dir, skip = []) {
  const session = await repo.readonlySession({ snapshotId })
  const store = session.store
  const keys = (await store.list()).filter((k) => !skip.some((p) => k.startsWith(p)))
  for (const key of keys) {
    const data = await store.get(key)
    if (data === null) throw new Error(`dump ${snapshotId}: ${key} listed but absent`)
    const f = join(dir, key)
    mkdirSync(dirname(f), { recursive: true })
    writeFileSync(f, data)
  }
  return keys.length
}
