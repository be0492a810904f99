import { closeSync, createReadStream, existsSync, openSync, readdirSync, readSync, renameSync, rmSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Duplex, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { createHash } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import { fsyncDir, writeFileAtomic } from '../fsutil.js';
import { queryFile, runFile, runScript } from '../db/sql.js';
import { inTransaction } from '../warehouse/warehouse.js';
import {
  MERGED,
  memberStream,
  readSidecar,
  sidecarOf,
  type Member,
  type MemberLine,
  type MovedLine,
  type SidecarLine,
} from './archive-members.js';
import { dropTemp } from '../db/statements.js';

/**
 * What goes into a merged file: an archived file whole (gzipped as it is read), a member of a
 * merged file copied byte for byte, or a member rewritten through `filter` (the purge), which
 * gets a new key.
 */
export type MergeInput =
  | { kind: 'file'; name: string; path: string; indexedKey: string | null }
  | { kind: 'copy'; member: Member; mergedPath: string }
  | { kind: 'filter'; member: Member; mergedPath: string; filter: () => MemberFilter };

/** A purge's line filter over one member's text, and whether any line is left. */
export interface MemberFilter {
  transform: (chunks: AsyncIterable<Buffer>) => AsyncIterable<Buffer>;
  kept: () => boolean;
}

export interface Merged {
  name: string;
  members: number;
  bytesIn: number;
  bytesOut: number;
}

/** The gzip level of members: most of the gain of the highest level at a fraction of its CPU. */
const LEVEL = 6;

/**
 * Writes the merged file of `inputs` into `dayDir` (docs/decisions.md, "Landing archive: merged by
 * day"): its text under a temp name, fsynced, then its sidecar (the members, and every name in
 * `replaces`) and the file renamed into place, the folder fsynced. Nothing counts it yet: the switch
 * (switchMerged) does, in one warehouse transaction.
 */
export async function writeMerged(
  dayDir: string,
  inputs: MergeInput[],
  replaces: string[],
  moved: { name: string; offset: number; length: number }[] = [],
): Promise<Merged> {
  const n = nextNumber(dayDir);
  const name = `archive-${n}.ndjson.gz`;
  const tmp = join(dayDir, `.${name}.tmp`);
  const sidecar: SidecarLine[] = [];
  let offset = 0;
  let bytesIn = 0;
  const fh = await open(tmp, 'w', 0o600);
  try {
    for (const input of inputs) {
      const written = await writeMember(fh, input, offset);
      bytesIn += written.read;
      if (written.line === null) continue;
      sidecar.push(written.line);
      offset += written.line.member_length;
    }
    await fh.sync();
  } catch (error) {
    await fh.close();
    rmSync(tmp, { force: true });
    throw error;
  }
  await fh.close();
  for (const replaced of replaces) sidecar.push({ kind: 'replaces', name: replaced });
  for (const m of moved)
    sidecar.push({ kind: 'moved', name: m.name, member_offset: m.offset, member_length: m.length });
  writeFileAtomic(join(dayDir, sidecarOf(name)), sidecar.map((line) => JSON.stringify(line)).join('\n') + '\n');
  renameSync(tmp, join(dayDir, name));
  fsyncDir(dayDir);
  return { name, members: sidecar.filter((l) => l.kind === 'member').length, bytesIn, bytesOut: offset };
}

/** One member written at `offset`; its sidecar line, or null when a filter left nothing of it. */
async function writeMember(
  fh: FileHandle,
  input: MergeInput,
  offset: number,
): Promise<{ line: MemberLine | null; read: number }> {
  let length = 0;
  const sink = async (chunks: AsyncIterable<Buffer>) => {
    for await (const chunk of chunks) {
      await fh.write(chunk, 0, chunk.length, offset + length);
      length += chunk.length;
    }
  };
  if (input.kind === 'copy') {
    await pipeline(memberStream(input.mergedPath, input.member), sink);
    const m = input.member;
    return { line: memberLine(m.fileKey, null, m.indexedKey, m.name, offset, length, m.lines, m.bytes), read: length };
  }
  const text = textTap();
  if (input.kind === 'file') {
    const raw = createReadStream(input.path);
    await pipeline(raw, text.tap, createGzip({ level: LEVEL }), sink);
    return {
      line: memberLine(text.key(), null, input.indexedKey, input.name, offset, length, text.lines(), text.bytes()),
      read: raw.bytesRead,
    };
  }
  const filter = input.filter();
  await pipeline(
    memberStream(input.mergedPath, input.member),
    createGunzip(),
    Duplex.from(filter.transform),
    text.tap,
    createGzip({ level: LEVEL }),
    sink,
  );
  const m = input.member;
  if (!filter.kept()) return { line: null, read: m.length };
  return {
    line: memberLine(text.key(), m.fileKey, m.indexedKey, m.name, offset, length, text.lines(), text.bytes()),
    read: m.length,
  };
}

function memberLine(
  fileKey: string,
  wasKey: string | null,
  indexedKey: string | null,
  name: string,
  offset: number,
  length: number,
  lines: number,
  bytes: number,
): MemberLine {
  return {
    kind: 'member',
    file_key: fileKey,
    was_key: wasKey,
    indexed_key: indexedKey,
    name,
    member_offset: offset,
    member_length: length,
    lines,
    bytes,
  };
}

/** SHA-256, bytes and lines of the text going by (a last line without a newline counts). */
function textTap(): { tap: Transform; key: () => string; bytes: () => number; lines: () => number } {
  const hash = createHash('sha256');
  let bytes = 0;
  let newlines = 0;
  let last = 0x0a;
  const tap = Duplex.from(async function* (chunks: AsyncIterable<Buffer>) {
    for await (const chunk of chunks) {
      hash.update(chunk);
      bytes += chunk.length;
      for (let at = chunk.indexOf(0x0a); at >= 0; at = chunk.indexOf(0x0a, at + 1)) newlines++;
      if (chunk.length > 0) last = chunk[chunk.length - 1] as number;
      yield chunk;
    }
  }) as unknown as Transform;
  return { tap, key: () => hash.digest('hex'), bytes: () => bytes, lines: () => newlines + (last === 0x0a ? 0 : 1) };
}

/** The next merged file's number in the folder (above every merged file, sidecar and temp file there). */
function nextNumber(dayDir: string): number {
  let max = 0;
  for (const name of readdirSync(dayDir)) {
    const n = /^\.?archive-(\d+)\./.exec(name)?.[1];
    if (n !== undefined) max = Math.max(max, Number(n));
  }
  return max + 1;
}

/**
 * The switch: in one transaction the merged file's members (from its sidecar) replace the rows of
 * what it replaces, the purge's index names it instead of them, and they are listed for removal
 * (sql/ops/compact/switch.sql); then they are removed. From the commit on, the merged file is
 * what holds those files; before it, the files it replaces still do.
 */
export async function switchMerged(
  conn: DuckDBConnection,
  dayDir: string,
  day: string,
  merged: string,
  now: Date,
): Promise<void> {
  await runScript(conn, 'ops/compact/read_sidecar', { file: join(dayDir, sidecarOf(merged)) });
  try {
    await inTransaction(conn, () =>
      runScript(conn, 'ops/compact/switch', { day, merged, dir: dayDir, now: now.toISOString() }),
    );
  } finally {
    for (const table of ['merge_sidecar', 'merge_members', 'merge_replaced', 'merge_moved'])
      await dropTemp(conn, table);
  }
  await removeReplaced(conn, dayDir, day);
  await fillHoles(conn, dayDir, day);
  // a merge whose every member a purge emptied holds nothing: it goes too
  if (!readSidecar(join(dayDir, sidecarOf(merged))).some((line) => line.kind === 'member')) removeFile(dayDir, merged);
}

/** Removes what committed merges of the day replaced (sql/ops/compact/garbage.sql), then forgets the list. */
export async function removeReplaced(conn: DuckDBConnection, dayDir: string, day: string): Promise<void> {
  const names = (await queryFile(conn, 'ops/compact/garbage', { day })).map((r) => String(r['name']));
  if (names.length === 0) return;
  for (const name of names) removeFile(dayDir, name);
  await runFile(conn, 'ops/compact/garbage_done', { day });
}

/**
 * Overwrites with zeros the bytes of the members a committed purge moved out of a merged file of
 * the day (sql/ops/compact/holes.sql), so the driver's lines are gone from the disk, and takes them
 * out of that file's sidecar; a merged file left with no member goes. Run again, it does the same.
 */
export async function fillHoles(conn: DuckDBConnection, dayDir: string, day: string): Promise<void> {
  const holes = await queryFile(conn, 'ops/compact/holes', { day });
  if (holes.length === 0) return;
  const byFile = new Map<string, { offset: number; length: number }[]>();
  for (const h of holes) {
    const list = byFile.get(String(h['name'])) ?? [];
    list.push({ offset: Number(h['member_offset']), length: Number(h['member_length']) });
    byFile.set(String(h['name']), list);
  }
  const named = new Set(
    (await queryFile(conn, 'ops/compact/day_members', { day })).map((r) => String(r['merged_name'])),
  );
  for (const [name, ranges] of byFile) {
    const path = join(dayDir, name);
    if (!existsSync(path)) continue;
    if (!named.has(name)) {
      removeFile(dayDir, name);
      continue;
    }
    const fh = await open(path, 'r+');
    try {
      const zeros = Buffer.alloc(2 ** 20);
      for (const { offset, length } of ranges)
        for (let at = 0; at < length; at += zeros.length)
          await fh.write(zeros, 0, Math.min(zeros.length, length - at), offset + at);
      await fh.sync();
    } finally {
      await fh.close();
    }
    const gone = new Set(ranges.map((r) => r.offset));
    const kept = readSidecar(join(dayDir, sidecarOf(name))).filter(
      (line) => !(line.kind === 'member' && gone.has(line.member_offset)),
    );
    writeFileAtomic(join(dayDir, sidecarOf(name)), kept.map((line) => JSON.stringify(line)).join('\n') + '\n');
  }
  await runFile(conn, 'ops/compact/holes_done', { day });
}

/** An archived file, and a merged file's sidecar with it. */
function removeFile(dayDir: string, name: string): void {
  rmSync(join(dayDir, name), { force: true });
  if (MERGED.test(name)) rmSync(join(dayDir, sidecarOf(name)), { force: true });
  fsyncDir(dayDir);
}

/**
 * Puts a day folder right after a merge or a purge's rewrite was cut short: what a committed merge
 * replaced is removed; a temp file goes; a merged file that no row names is either a merge that
 * never committed (every file it replaces is still there: it goes) or one committed where those
 * files are gone (a backup taken between the warehouse and the landing area: its switch is run
 * again, from its sidecar). A sidecar without its merged file goes.
 */
export async function recoverDay(conn: DuckDBConnection, dayDir: string, day: string, now: Date): Promise<void> {
  await removeReplaced(conn, dayDir, day);
  await fillHoles(conn, dayDir, day);
  const names = readdirSync(dayDir);
  for (const name of names) if (/^\.archive-\d+\..*\.tmp$/.test(name)) rmSync(join(dayDir, name), { force: true });
  const sidecars = names.filter((n) => /^archive-\d+\.members\.idx$/.test(n));
  if (sidecars.length === 0) return;
  const named = new Set(
    (await queryFile(conn, 'ops/compact/day_members', { day })).map((r) => String(r['merged_name'])),
  );
  for (const sidecar of sidecars) {
    const merged = sidecar.replace(/\.members\.idx$/, '.ndjson.gz');
    if (!existsSync(join(dayDir, merged))) {
      rmSync(join(dayDir, sidecar), { force: true });
      continue;
    }
    if (named.has(merged)) continue;
    const lines = readSidecar(join(dayDir, sidecar));
    const replaced = lines.filter((l) => l.kind === 'replaces').map((l) => l.name);
    const moved = lines.filter((l): l is MovedLine => l.kind === 'moved');
    // never committed: what it replaces is all there, and every member it took from a merged file
    // is still there too (its bytes not yet overwritten: a gzip member's first bytes)
    const uncommitted =
      replaced.length + moved.length > 0 &&
      replaced.every((r) => existsSync(join(dayDir, r))) &&
      moved.every((m) => startsMember(join(dayDir, m.name), m.member_offset));
    if (uncommitted) removeFile(dayDir, merged);
    else await switchMerged(conn, dayDir, day, merged, now);
  }
  fsyncDir(dayDir);
}

/** Whether a gzip member starts at `offset` of the file (its magic bytes), not a hole. */
export function startsMember(path: string, offset: number): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return false;
  }
  try {
    const head = Buffer.alloc(2);
    return readSync(fd, head, 0, 2, offset) === 2 && head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    closeSync(fd);
  }
}

/** The day of a day folder (`landing/loaded/<day>`). */
export const dayOf = (dayDir: string): string => basename(dayDir);
