import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, lstatSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { createGunzip, createGzip } from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import { fsyncDir, fsyncFile, moveIntoPlace, temporaryBeside, writeFileAtomic } from '../fsutil.js';
import { isInputName } from '../landing-status.js';
import { splitParquet } from './split-parquet.js';
import type { CellDirectory } from './directory.js';
import type { Forwarder, SplitResult } from './split-types.js';

export type { Forwarder, SplitResult } from './split-types.js';

/** The most bytes of records forwarded in one piece (one row of the shared intake). */
const PIECE_BYTES = 16 * 2 ** 20;
/** The files a cell has found to be all its own, by identity, so a file loaded a slice at a time is read once. */
const LEDGER = '.cells-split.json';

type Identity = { ino: number; size: number; mtimeMs: number };

/**
 * Intake by driver (docs/decisions.md, Cells): every record of a partner file dropped into this
 * cell's landing area is loaded in its driver's cell, once. Before a load lists the area, each
 * NDJSON file (gzipped or not; Parquet: src/cells/split-parquet.ts) that has been quiet for `quietMs` is read for its drivers; a driver
 * without a cell is given one (src/cells/directory.ts). The records of other cells' drivers are
 * committed to the shared intake for those cells' loads (as SDK uploads are), in pieces named
 * after the file; only then is the file replaced by its own records (or removed when none are
 * left). Killed in between, the file is split again and the same pieces are sent under the same
 * names: a piece still waiting is kept once, and one loaded already loads again as unchanged
 * re-sends. A record without a valid `appId` and `platformUserId` stays, for this cell's load to
 * quarantine with its reason: nothing is set aside for being elsewhere.
 */
export async function splitLanding(
  landingDir: string,
  cell: string,
  cells: CellDirectory,
  forward: Forwarder,
  options: { quietMs: number; now: Date },
): Promise<SplitResult> {
  const out: SplitResult = { checked: 0, split: 0, forwarded: 0, pieces: 0 };
  if (!existsSync(landingDir)) return out;
  const ledgerFile = join(landingDir, LEDGER);
  const before = readLedger(ledgerFile);
  const ledger: Record<string, Identity> = {};
  for (const name of readdirSync(landingDir).filter(isInputName).sort()) {
    const parquet = name.endsWith('.parquet');
    if (!parquet && !/\.(ndjson|jsonl)(\.gz)?$/.test(name)) continue;
    const path = join(landingDir, name);
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (!st?.isFile() || st.nlink > 1) continue;
    const id = { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
    const known = before[name];
    if (known && known.ino === id.ino && known.size === id.size && known.mtimeMs === id.mtimeMs) {
      ledger[name] = known;
      continue;
    }
    // a partner file still being written is split once it is complete, as it is loaded
    if (options.now.getTime() - st.mtimeMs < options.quietMs) continue;
    out.checked++;
    const mine = parquet
      ? await splitParquet(path, id, cell, cells, forward, options.now, out)
      : await splitFile(path, id, cell, cells, forward, options.now, out);
    if (mine) {
      const after = lstatSync(path, { throwIfNoEntry: false });
      if (after) ledger[name] = { ino: after.ino, size: after.size, mtimeMs: after.mtimeMs };
    }
  }
  // written only when it changed: most batches find nothing new, and each write is fsynced
  const text = JSON.stringify(ledger);
  if (text !== JSON.stringify(before)) writeFileAtomic(ledgerFile, text);
  return out;
}

/** Splits one file; whether some of it stays here. */
async function splitFile(
  path: string,
  id: Identity,
  cell: string,
  cells: CellDirectory,
  forward: Forwarder,
  now: Date,
  out: SplitResult,
): Promise<boolean> {
  // first pass: the file's drivers, by app, each given its cell; each line's driver is kept (an
  // index, -1 for none) so the second pass parses nothing again
  const drivers = new Map<string, Set<number>>();
  const seen = new Map<string, number>();
  const who: Array<{ appId: string; userId: number }> = [];
  const lineDriver: number[] = [];
  for await (const line of lines(path)) {
    const found = driverOf(line);
    if (!found) {
      lineDriver.push(-1);
      continue;
    }
    const key = `${found.appId}\u0000${found.userId}`;
    let index = seen.get(key);
    if (index === undefined) {
      index = who.length;
      seen.set(key, index);
      who.push(found);
      const users = drivers.get(found.appId) ?? new Set<number>();
      drivers.set(found.appId, users);
      users.add(found.userId);
    }
    lineDriver.push(index);
  }
  const cellOf = new Map<string, Map<number, string>>();
  let foreign = false;
  for (const [appId, users] of drivers) {
    const given = await cells.assign(appId, [...users], now);
    cellOf.set(appId, given);
    for (const c of given.values()) if (c !== cell) foreign = true;
  }
  if (!foreign) return true;
  // second pass: this cell's records to a new file beside it, the others' in pieces to their cells
  const gz = path.endsWith('.gz');
  const tmp = temporaryBeside(path);
  const file = createWriteStream(tmp, { mode: 0o600 });
  const gzip = gz ? createGzip() : null;
  const sink: Writable = gzip ?? file;
  const written = gzip ? pipeline(gzip, file) : once(file, 'close');
  const pieces = new Map<string, { appId: string; parts: Buffer[]; bytes: number; n: number }>();
  const stem = basename(path).replace(/\.(ndjson|jsonl)(\.gz)?$/, '');
  const tag = createHash('sha256')
    .update(`${basename(path)}\u0000${id.size}\u0000${id.mtimeMs}`)
    .digest('hex')
    .slice(0, 12);
  const piecesSent = new Map<string, number>();
  const send = async (target: string): Promise<void> => {
    const p = pieces.get(target);
    if (!p || p.n === 0) return;
    const k = (piecesSent.get(target) ?? 0) + 1;
    piecesSent.set(target, k);
    const name = `${stem}.from-${cell}-${tag}-${target}-${String(k).padStart(4, '0')}.ndjson`;
    await forward.put(name, p.appId, now, Buffer.concat(p.parts), target);
    out.forwarded += p.n;
    out.pieces++;
    pieces.set(target, { appId: p.appId, parts: [], bytes: 0, n: 0 });
  };
  let kept = 0;
  let at = 0;
  try {
    for await (const line of lines(path)) {
      const index = lineDriver[at++] ?? -1;
      const driver = index >= 0 ? who[index] : undefined;
      const target = driver ? cellOf.get(driver.appId)?.get(driver.userId) : undefined;
      if (!driver || target === undefined || target === cell) {
        if (!sink.write(`${line}\n`)) await once(sink, 'drain');
        kept++;
        continue;
      }
      const p = pieces.get(target) ?? { appId: driver.appId, parts: [], bytes: 0, n: 0 };
      pieces.set(target, p);
      const bytes = Buffer.from(`${line}\n`);
      p.parts.push(bytes);
      p.bytes += bytes.length;
      p.n++;
      if (p.bytes >= PIECE_BYTES) await send(target);
    }
    for (const target of [...pieces.keys()]) await send(target);
    sink.end();
    await written;
  } catch (error) {
    sink.destroy();
    rmSync(tmp, { force: true });
    throw error;
  }
  // written to while it was read: its new lines are not judged, so nothing of it loads in this run
  // (the run fails and the next splits it again; what was sent is sent again as unchanged re-sends)
  const after = lstatSync(path, { throwIfNoEntry: false });
  if (!after || after.size !== id.size || after.mtimeMs !== id.mtimeMs || after.ino !== id.ino) {
    rmSync(tmp, { force: true });
    throw new Error(`${basename(path)} changed while it was split by cell: it is split again at the next run`);
  }
  out.split++;
  // every other cell's records are committed in the shared intake: the file keeps its own only
  if (kept === 0) {
    rmSync(tmp, { force: true });
    rmSync(path, { force: true });
    fsyncDir(join(path, '..'));
    return false;
  }
  fsyncFile(tmp);
  moveIntoPlace(tmp, path);
  return true;
}

/** The lines of an NDJSON file, gunzipped when it ends in .gz. */
function lines(path: string): AsyncIterable<string> {
  const raw = createReadStream(path);
  const input = path.endsWith('.gz') ? raw.pipe(createGunzip()) : raw;
  return createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
}

/** A record's driver, or null when the line does not name one validly (the load quarantines it). */
function driverOf(line: string): { appId: string; userId: number } | null {
  if (line.trim() === '') return null;
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof record !== 'object' || record === null) return null;
  const { appId, platformUserId } = record as { appId?: unknown; platformUserId?: unknown };
  if (typeof appId !== 'string' || appId === '') return null;
  if (typeof platformUserId !== 'number' || !Number.isSafeInteger(platformUserId) || platformUserId < 1) return null;
  return { appId, userId: platformUserId };
}

function readLedger(file: string): Record<string, Identity> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, Identity>;
  } catch {
    return {};
  }
}
