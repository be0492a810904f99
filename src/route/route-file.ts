import { closeSync, fstatSync, fsyncSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { endianness } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { decodeBlock, encodeBlock, maxBlockBytes } from './route-codec.js';

/**
 * A route file: the kept points of the trips one warehouse version wrote for one trip date, read
 * by the API with two positioned reads (no DuckDB per request: a Parquet read of one trip first
 * reads and parses the footer of a day's file, more than the whole request may take).
 *
 * Layout, little-endian: one block per trip, its n points' four columns one after the other
 * (time in epoch ms, lat, lng, speed in m/s), each stored exactly in as few bytes as its decimals
 * allow (src/route/route-codec.ts: 6.4 bytes a point on the generator's day, whose positions have
 * 6 decimals as an SDK's do, where four float64 took 32); then the index, UTF-8 JSON
 * `[[appId, tripId, offset, count, bytes, crc32], ...]`; then 24 bytes: the index's byte length
 * (float64), the index's CRC-32 (uint32), four zero bytes and the magic `DDSROUT3`. The magic
 * comes last, so a file cut short is refused, not misread; every block and the index carry a
 * CRC-32, so a flipped byte is refused where it is read (RouteFileDamagedError), never served.
 * `DDSROUT2` (no checksums, a 16-byte footer) and `DDSROUT1` (every column float64, 32 bytes a
 * point, no block length in the index) files are still read, and rewritten as `DDSROUT3` by the
 * next publish (src/publish/route-upkeep.ts).
 */
const MAGIC = 'DDSROUT3';
const MAGIC_UNCHECKED = 'DDSROUT2';
const MAGIC_FLOAT64 = 'DDSROUT1';
const FOOTER = 24;
const OLD_FOOTER = 16;
const FLOAT64_BYTES_PER_POINT = 32;

/** The file of the trips `version` wrote for `tripDate`: where the API looks for such a trip's route. */
export const routeFile = (routesDir: string, tripDate: string, version: number | string): string =>
  join(routesDir, `trip_date=${tripDate}`, `v${version}.route`);

if (endianness() !== 'LE') throw new Error('route files are little-endian; this host is big-endian');

export interface RoutePoints {
  /** Epoch milliseconds. */
  t: Float64Array;
  lat: Float64Array;
  lng: Float64Array;
  /** Metres per second, as delivered. */
  speed: Float64Array;
}

type IndexEntry = [appId: string, tripId: string, offset: number, count: number, bytes: number, crc: number];

/** A trip's block: where it starts, its points, its bytes, its CRC-32 (null: a file of an older format), and whether it is four plain float64 columns. */
interface Block {
  offset: number;
  count: number;
  bytes: number;
  crc: number | null;
  float64: boolean;
}

/**
 * A route file that cannot be read as written: cut short, a byte changed (a block's or the
 * index's CRC-32 fails), or not a route file. Nothing of it is served; the API answers 503
 * `data_unavailable` and the next publish rebuilds the file from the raw points.
 */
export class RouteFileDamagedError extends Error {
  constructor(
    readonly file: string,
    why: string,
  ) {
    super(`route file ${file} is damaged: ${why}`);
    this.name = 'RouteFileDamagedError';
  }
}

/** Writes a route file to `tmp`, trip by trip; `finish(target)` completes it and renames it into place. */
export class RouteFileWriter {
  private readonly fd: number;
  private offset = 0;
  private readonly index: IndexEntry[] = [];
  /** Where a block is encoded before it is written: grown to the largest trip, reused. */
  private scratch = Buffer.alloc(maxBlockBytes(4096));

  constructor(private readonly tmp: string) {
    this.fd = openSync(tmp, 'w', 0o600);
  }

  add(appId: string, tripId: string, points: RoutePoints): void {
    const n = points.t.length;
    if (this.scratch.length < maxBlockBytes(n)) this.scratch = Buffer.alloc(maxBlockBytes(n));
    const bytes = encodeBlock([points.t, points.lat, points.lng, points.speed], this.scratch, 0);
    this.index.push([appId, tripId, this.offset, n, bytes, crc32(this.scratch.subarray(0, bytes))]);
    for (let at = 0; at < bytes; ) at += writeSync(this.fd, this.scratch, at, bytes - at, this.offset + at);
    this.offset += bytes;
  }

  /** Appends the index and footer, fsyncs and renames onto `target` (readers see it whole or not at all). */
  finish(target: string): void {
    try {
      const index = Buffer.from(JSON.stringify(this.index), 'utf8');
      const footer = Buffer.alloc(FOOTER);
      footer.writeDoubleLE(index.length, 0);
      footer.writeUInt32LE(crc32(index), 8);
      footer.write(MAGIC, 16, 'latin1');
      writeSync(this.fd, index, 0, index.length, this.offset);
      writeSync(this.fd, footer, 0, FOOTER, this.offset + index.length);
      fsyncSync(this.fd);
    } finally {
      closeSync(this.fd);
    }
    renameSync(this.tmp, target);
  }

  abort(): void {
    try {
      closeSync(this.fd);
    } catch {
      // already closed by finish
    }
    rmSync(this.tmp, { force: true });
  }
}

/** The index, keyed `appId \u0000 tripId`, of a file whose identity (inode, size, mtime) has not changed. */
const indexes = new Map<string, { identity: string; trips: Map<string, Block> }>();
const MAX_CACHED_INDEXES = 256;

const keyOf = (appId: string, tripId: string): string => `${appId}\u0000${tripId}`;

/** The format of a file from its last eight bytes: its footer's length, whether blocks carry checksums, whether columns are float64. */
function formatOf(magic: string): { footer: number; checked: boolean; float64: boolean } | null {
  if (magic === MAGIC) return { footer: FOOTER, checked: true, float64: false };
  if (magic === MAGIC_UNCHECKED) return { footer: OLD_FOOTER, checked: false, float64: false };
  if (magic === MAGIC_FLOAT64) return { footer: OLD_FOOTER, checked: false, float64: true };
  return null;
}

/** The index entries from the tail of a file (`bytes` ends where the file ends); throws RouteFileDamagedError. */
function parseEntries(path: string, bytes: Buffer, fileSize: number): [appId: string, tripId: string, block: Block][] {
  const format = bytes.length < OLD_FOOTER ? null : formatOf(bytes.toString('latin1', bytes.length - 8));
  if (!format || bytes.length < format.footer)
    throw new RouteFileDamagedError(path, 'no route file magic at its end (cut short?)');
  const footer = bytes.subarray(bytes.length - format.footer);
  const length = footer.readDoubleLE(0);
  const start = bytes.length - format.footer - length;
  if (!Number.isInteger(length) || start < 0)
    throw new RouteFileDamagedError(path, `an index of ${length} bytes does not fit a ${fileSize}-byte file`);
  const index = bytes.subarray(start, start + length);
  if (format.checked && crc32(index) !== footer.readUInt32LE(8))
    throw new RouteFileDamagedError(path, 'its index does not match its CRC-32');
  let entries: IndexEntry[];
  try {
    entries = JSON.parse(index.toString('utf8')) as IndexEntry[];
  } catch {
    throw new RouteFileDamagedError(path, 'its index is not JSON');
  }
  return entries.map(([app, trip, offset, count, blockBytes, crc]) => [
    app,
    trip,
    {
      offset,
      count,
      bytes: format.float64 ? count * FLOAT64_BYTES_PER_POINT : blockBytes,
      crc: format.checked ? crc : null,
      float64: format.float64,
    },
  ]);
}

/** The index entries of the file open as `fd`, from its tail: one read, a second one if the index is longer. */
function readEntries(fd: number, path: string, size: number): [appId: string, tripId: string, block: Block][] {
  let tail = Math.min(size, 64 * 1024);
  let bytes = Buffer.alloc(tail);
  readSync(fd, bytes, 0, tail, size - tail);
  const format = tail >= OLD_FOOTER ? formatOf(bytes.toString('latin1', tail - 8)) : null;
  const length = format && tail >= format.footer ? bytes.readDoubleLE(tail - format.footer) : NaN;
  if (format && Number.isInteger(length) && length + format.footer > tail && length + format.footer <= size) {
    tail = length + format.footer;
    bytes = Buffer.alloc(tail);
    readSync(fd, bytes, 0, tail, size - tail);
  }
  return parseEntries(path, bytes, size);
}

/** Whether a route file is of the current format (its blocks carry checksums); false for an older one. Throws RouteFileDamagedError. */
export function routeFileIsCurrent(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const entries = readEntries(fd, path, size);
    return entries.every(([, , block]) => block.crc !== null);
  } finally {
    closeSync(fd);
  }
}

/** Reads every block of a route file and checks its CRC-32 (the publish, for a file a reader reported); throws RouteFileDamagedError. */
export function verifyRouteFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    const entries = readEntries(fd, path, fstatSync(fd).size);
    for (const [, , block] of entries) readBlock(fd, path, block, blockFor(block.count));
  } finally {
    closeSync(fd);
  }
}

/**
 * Where a trip's points are read to: one block reused by every read, grown to the longest trip
 * seen. A route read that allocated 32 bytes per point outside V8's heap made V8, on account of
 * that external memory alone, run full mark-compacts often at the route's target rate, and their
 * pauses became the route's p99 (docs/benchmarks.md, route). Points read into
 * it are valid until the next read: use them before anything else can run.
 */
let shared = new Float64Array(4 * 4096);
/** Where a block's bytes are read to before they are decoded into `shared`: reused likewise. */
let sharedBytes = Buffer.alloc(maxBlockBytes(4096));

/**
 * Trips longer than this are read into a block of their own: their route is worked on across
 * turns of the event loop (src/api/geometry/route-work.ts), and its own block spares it a copy.
 */
export const SHARED_BLOCK_MAX_POINTS = 16_384;

/** Whether `points` are views into the shared block (valid only until the next read). */
export const isShared = (points: RoutePoints): boolean => points.t.buffer === shared.buffer;

function blockFor(n: number): Float64Array {
  if (n > SHARED_BLOCK_MAX_POINTS) return new Float64Array(4 * n);
  if (shared.length < 4 * n) {
    let size = shared.length;
    while (size < 4 * n) size *= 2;
    shared = new Float64Array(size);
  }
  return shared;
}

function bytesFor(n: number): Buffer {
  if (sharedBytes.length < n) {
    let size = sharedBytes.length;
    while (size < n) size *= 2;
    sharedBytes = Buffer.alloc(size);
  }
  return sharedBytes;
}

/** Reads one block at its offset through `fd` into `into` (four columns of its count), checking its CRC-32 first. */
function readBlock(fd: number, path: string, block: Block, into: Float64Array): void {
  const { offset, count: n, bytes, crc, float64 } = block;
  if (n === 0) return;
  const target = float64 ? new Uint8Array(into.buffer, into.byteOffset, bytes) : bytesFor(bytes);
  if (readSync(fd, target, 0, bytes, offset) !== bytes)
    throw new RouteFileDamagedError(path, 'shorter than its index says');
  if (crc !== null && crc32(target.subarray(0, bytes)) !== crc)
    throw new RouteFileDamagedError(path, `the block at byte ${offset} does not match its CRC-32`);
  if (float64) return;
  try {
    decodeBlock(target, 0, bytes, n, into);
  } catch (error) {
    throw new RouteFileDamagedError(
      path,
      `the block at byte ${offset}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

const pointsOf = (block: Float64Array, n: number): RoutePoints => ({
  t: block.subarray(0, n),
  lat: block.subarray(n, 2 * n),
  lng: block.subarray(2 * n, 3 * n),
  speed: block.subarray(3 * n, 4 * n),
});

/**
 * One trip's points from a route file; null when the file does not hold the trip, undefined when
 * the file does not exist (pruned by retention, or never written). Synchronous (open, fstat, one
 * or two reads, close), as the serving pack reads: a route file the publish just wrote is in the
 * page cache, and four system calls cost less than the thread pool's round trips they replace.
 *
 * The points are views into one shared block (see `blockFor`): they are valid until the next
 * call, so use them before the next await.
 */
export function readRoute(path: string, appId: string, tripId: string): RoutePoints | null | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    const identity = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    let cached = indexes.get(path);
    if (cached?.identity !== identity) {
      cached = {
        identity,
        trips: new Map(readEntries(fd, path, stat.size).map(([app, trip, block]) => [keyOf(app, trip), block])),
      };
      if (indexes.size >= MAX_CACHED_INDEXES) indexes.delete(indexes.keys().next().value as string);
      indexes.set(path, cached);
    }
    const entry = cached.trips.get(keyOf(appId, tripId));
    if (!entry) return null;
    const block = blockFor(entry.count);
    readBlock(fd, path, entry, block);
    return pointsOf(block, entry.count);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes into `writer` every trip the `sources` list, each with its copy from the first source
 * that lists it (sources newest first: the API serves a trip from the newest file that lists it),
 * every block checked (its CRC-32) before it is written again: RouteFileDamagedError, and nothing
 * is sealed. Returns the trips written, as [appId, tripId].
 */
export function mergeRouteFiles(sources: string[], writer: RouteFileWriter): [string, string][] {
  const seen = new Set<string>();
  const trips: [string, string][] = [];
  for (const path of sources) {
    const fd = openSync(path, 'r');
    try {
      for (const [app, trip, block] of readEntries(fd, path, fstatSync(fd).size)) {
        const key = keyOf(app, trip);
        if (seen.has(key)) continue;
        seen.add(key);
        const points = blockFor(block.count);
        readBlock(fd, path, block, points);
        writer.add(app, trip, pointsOf(points, block.count));
        trips.push([app, trip]);
      }
    } finally {
      closeSync(fd);
    }
  }
  return trips;
}

/**
 * Rewrites a route file without the trips `drop` names (a purge), under a temp name renamed over
 * it: a reader that has it open keeps the old bytes, the next open gets the new. Every block kept
 * is checked (its CRC-32) before it is written again, so a damaged file is never sealed with fresh
 * checksums: RouteFileDamagedError, and the file is left as it is. Returns whether the file held
 * such a trip; with `always` it is rewritten anyway (a file of an older format, upgraded).
 */
export function rewriteRouteFileWithout(
  path: string,
  drop: (appId: string, tripId: string) => boolean,
  always = false,
): boolean {
  const fd = openSync(path, 'r');
  try {
    // through the fd: the file may be renamed over meanwhile, the fd keeps what was opened
    const entries = readEntries(fd, path, fstatSync(fd).size);
    const dropped = entries.some(([app, trip]) => drop(app, trip));
    if (!dropped && !always) return false;
    const writer = new RouteFileWriter(`${path}.purge.tmp`);
    try {
      for (const [app, trip, block] of entries) {
        if (drop(app, trip)) continue;
        const points = new Float64Array(4 * block.count);
        readBlock(fd, path, block, points);
        writer.add(app, trip, pointsOf(points, block.count));
      }
      writer.finish(path);
    } catch (error) {
      writer.abort();
      throw error;
    }
    return dropped;
  } finally {
    closeSync(fd);
  }
}
