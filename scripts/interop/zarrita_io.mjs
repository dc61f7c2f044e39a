#!/usr/bin/env node
// zarrita.js reader/writer for the interop tests (autotest/test_interop.py).
//
//   node zarrita_io.mjs version
//   node zarrita_io.mjs read STORE ARRAYPATH OUT.bin
//       Reads the whole array; writes its values C order, little-endian to OUT.bin and prints
//       {"shape": [...], "data_type": "..."} on stdout.
//   node zarrita_io.mjs write STORE ARRAYPATH IN.bin --dtype D --shape a,b --chunks a,b
//       [--codec none|zstd|gzip|blosc] [--fill V]
//       Creates (or reuses) the group at STORE, creates the array ARRAYPATH with a regular chunk
//       grid and the given codec after `bytes` (little endian), and writes IN.bin (C order, LE).
//       zarrita 0.7 cannot write sharded arrays ("set on sharded arrays" is unsupported): --shards
//       is refused with exit status 3, and so is --codec gzip (zarrita 0.7's gzip codec is decode-only).
// Exit status: 0 ok, 1 error, 2 usage, 3 unsupported by zarrita.
import { readFile, writeFile } from "node:fs/promises";
import * as zarr from "zarrita";
import FileSystemStore from "@zarrita/storage/fs";

const TYPED = {
  int8: Int8Array, uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array,
  int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array,
  float32: Float32Array, float64: Float64Array,
};
if (globalThis.Float16Array) TYPED.float16 = globalThis.Float16Array;

class Unsupported extends Error {}

function usage(msg) {
  process.stderr.write(`zarrita_io: ${msg}\n`);
  process.exit(2);
}

function parseOpts(args) {
  const opts = {};
  for (let i = 0; i < args.length; i += 2) {
    if (!args[i].startsWith("--") || i + 1 >= args.length) usage(`bad option ${args[i]}`);
    opts[args[i].slice(2)] = args[i + 1];
  }
  return opts;
}

const ints = (s) => s.split(",").filter((x) => x !== "").map((x) => Number.parseInt(x, 10));

function location(storePath, arrayPath) {
  const store = new FileSystemStore(storePath);
  const rootLoc = zarr.root(store);
  const p = arrayPath.replace(/^\/+/, "");
  return { store, rootLoc, loc: p ? rootLoc.resolve(p) : rootLoc };
}

// Raw little-endian bytes of the data held in a zarrita chunk (x86/arm hosts are little-endian).
function rawBytes(data) {
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (data && data._bytes) return data._bytes; // BoolArray / string arrays keep a Uint8Array
  throw new Unsupported(`cannot dump data of type ${data?.constructor?.name}`);
}

async function cmdRead(storePath, arrayPath, out) {
  const { loc } = location(storePath, arrayPath);
  const arr = await zarr.open.v3(loc, { kind: "array" });
  const meta = JSON.stringify({ shape: arr.shape, data_type: arr.dtype }) + "\n";
  if (arr.shape.some((n) => n === 0)) {
    // zarrita 0.7 get() throws on zero-size arrays ("empty iterator"); there are no values to read.
    await writeFile(out, new Uint8Array(0));
    process.stdout.write(meta);
    return;
  }
  const res = await zarr.get(arr);
  let bytes;
  if (arr.shape.length === 0 && (typeof res !== "object" || res === null || !("data" in res))) {
    const T = TYPED[arr.dtype];
    if (arr.dtype === "bool") bytes = Uint8Array.of(res ? 1 : 0);
    else if (T) bytes = rawBytes(T.of(res));
    else throw new Unsupported(`scalar of type ${arr.dtype}`);
  } else {
    bytes = rawBytes(res.data);
  }
  await writeFile(out, bytes);
  process.stdout.write(meta);
}

function codecList(name) {
  const bytes = { name: "bytes", configuration: { endian: "little" } };
  switch (name ?? "none") {
    case "none": return [bytes];
    case "zstd": return [bytes, { name: "zstd", configuration: { level: 3, checksum: false } }];
    case "gzip": return [bytes, { name: "gzip", configuration: { level: 5 } }];
    case "blosc":
      return [bytes, {
        name: "blosc",
        configuration: { cname: "lz4", clevel: 5, shuffle: "shuffle", typesize: 4, blocksize: 0 },
      }];
    default: usage(`unknown codec ${name}`);
  }
}

async function cmdWrite(storePath, arrayPath, input, opts) {
  if (opts.shards) throw new Unsupported("zarrita cannot write sharded arrays (set on sharded arrays)");
  if (opts.codec === "gzip") throw new Unsupported("zarrita 0.7's gzip codec cannot encode");
  const dtype = opts.dtype ?? usage("--dtype required");
  const T = TYPED[dtype] ?? (() => { throw new Unsupported(`dtype ${dtype}`); })();
  const shape = ints(opts.shape ?? usage("--shape required"));
  const chunks = ints(opts.chunks ?? opts.shape);
  const buf = await readFile(input);
  const count = shape.reduce((a, b) => a * b, 1);
  if (buf.byteLength !== count * T.BYTES_PER_ELEMENT) {
    throw new Error(`${input}: ${buf.byteLength} bytes, expected ${count * T.BYTES_PER_ELEMENT}`);
  }
  const data = new T(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
  const codecs = codecList(opts.codec);
  if (opts.codec === "blosc") codecs[1].configuration.typesize = T.BYTES_PER_ELEMENT;
  const { store, rootLoc, loc } = location(storePath, arrayPath);
  if (!(await store.has("/zarr.json"))) await zarr.create(rootLoc);
  // intermediate groups
  const parts = arrayPath.replace(/^\/+/, "").split("/");
  for (let i = 1; i < parts.length; i++) {
    const g = rootLoc.resolve(parts.slice(0, i).join("/"));
    if (!(await store.has(`${g.path.replace(/\/$/, "")}/zarr.json`))) await zarr.create(g);
  }
  let fill = opts.fill === undefined ? 0 : Number(opts.fill);
  if (dtype.endsWith("64") && dtype.includes("int")) fill = BigInt(opts.fill ?? 0);
  const arr = await zarr.create(loc, { shape, chunkShape: chunks, dtype, codecs, fillValue: fill });
  const stride = [];
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) { stride[i] = s; s *= shape[i]; }
  await zarr.set(arr, null, { data, shape, stride });
}

async function main() {
  const [cmd, ...args] = process.argv.slice(2);
  try {
    if (cmd === "version") {
      const pkg = async (name) => JSON.parse(await readFile(
        new URL(`./node_modules/${name}/package.json`, import.meta.url), "utf8")).version;
      const v = await pkg("zarrita");
      const s = await pkg("@zarrita/storage");
      process.stdout.write(JSON.stringify({ zarrita: v, "@zarrita/storage": s, node: process.version }) + "\n");
    } else if (cmd === "read") {
      if (args.length !== 3) usage("read STORE ARRAYPATH OUT.bin");
      await cmdRead(...args);
    } else if (cmd === "write") {
      if (args.length < 3) usage("write STORE ARRAYPATH IN.bin --dtype D --shape ...");
      await cmdWrite(args[0], args[1], args[2], parseOpts(args.slice(3)));
    } else {
      usage("commands: version | read | write");
    }
  } catch (e) {
    process.stderr.write(`zarrita_io: ${e instanceof Unsupported ? "unsupported: " : ""}${e?.stack ?? e}\n`);
    process.exit(e instanceof Unsupported ? 3 : 1);
  }
}

await main();
