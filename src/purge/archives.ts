import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import { fsyncDir } from '../fsutil.js';
import { fileKey } from '../load/scan-file.js';
import { query, quoteLiteral, run, sqlText } from '../db/sql.js';

/** Whose records to take out: the purge's requests (app, platform user id, org user id). */
export interface PurgedUser {
  appId: string;
  platformUserId: number;
  orgUserId: string;
}

export interface ArchiveScrubResult {
  filesRewritten: number;
  filesRemoved: number;
  records: number;
  /** Archives that could not be read (a truncated gzip, a damaged or failed Parquet file without the identity columns): removed. */
  unreadable: string[];
}

const NDJSON = /\.(ndjson|jsonl|json)(\.gz)?$/i;
const PARQUET = /\.parquet$/i;

/**
 * Takes the records of purged users out of the archived landing files (`landing/loaded/<day>/`,
 * `landing/failed/<day>/`): each file that holds one is rewritten without them in the same format
 * (temp name, fsync, rename, fsync of the folder), or removed when nothing else remains. An NDJSON
 * line keeps its bytes and its line number (a removed record leaves an empty line, which the
 * loader skips), so quarantine references and a re-derive of the archive stay right. A rewritten
 * archive that was loaded is entered in the ledger under its new SHA-256 with the original's batch,
 * so loading it again is a no-op, like loading the original. An archive that cannot be read whole
 * (a truncated gzip, a damaged Parquet file) cannot be filtered and is removed.
 */
export async function scrubArchives(
  conn: DuckDBConnection,
  landingDir: string,
  users: PurgedUser[],
  now: Date,
): Promise<ArchiveScrubResult> {
  const result: ArchiveScrubResult = { filesRewritten: 0, filesRemoved: 0, records: 0, unreadable: [] };
  if (users.length === 0) return result;
  for (const file of archivedFiles(landingDir)) {
    // the ledger learns the new key before the rename: a crash in between leaves both keys known
    const ledger = (oldKey: string, newKey: string, bytes: number) =>
      run(conn, sqlText('ops/purge/ledger_rewritten'), {
        old_key: oldKey,
        new_key: newKey,
        path: file,
        bytes,
        now: now.toISOString(),
      });
    const outcome = NDJSON.test(file) ? await scrubNdjson(file, users, ledger) : await scrubParquet(conn, file, ledger);
    if (outcome === 'unreadable') {
      // it cannot be filtered, so it may hold the user's records: removed (docs/decisions.md, Deletion), and named
      rmSync(file, { force: true });
      fsyncDir(dirname(file));
      result.unreadable.push(file);
      continue;
    }
    if (outcome.records === 0) continue;
    result.records += outcome.records;
    if (outcome.removed) result.filesRemoved++;
    else result.filesRewritten++;
  }
  return result;
}

function archivedFiles(landingDir: string): string[] {
  const files: string[] = [];
  for (const outcome of ['loaded', 'failed']) {
    const root = join(landingDir, outcome);
    if (!existsSync(root)) continue;
    for (const day of readdirSync(root).sort()) {
      const dir = join(root, day);
      if (!statSync(dir).isDirectory()) continue;
      for (const name of readdirSync(dir).sort()) {
        if (!name.startsWith('.') && (NDJSON.test(name) || PARQUET.test(name))) files.push(join(dir, name));
      }
    }
  }
  return files;
}

type Outcome = { records: number; removed: boolean } | 'unreadable';

/** Enters a rewritten archive in the ledger: its key before and after, and its new size. */
type Ledger = (oldKey: string, newKey: string, bytes: number) => Promise<void>;

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Works on bytes, line by line: the lines kept are written back exactly (even a failed file's invalid UTF-8). */
async function scrubNdjson(file: string, users: PurgedUser[], ledger: Ledger): Promise<Outcome> {
  const gz = /\.gz$/i.test(file);
  let stored: Buffer;
  let bytes: Buffer;
  try {
    stored = readFileSync(file);
    bytes = gz ? gunzipSync(stored) : stored;
  } catch {
    return 'unreadable';
  }
  const parts: Buffer[] = [];
  let records = 0;
  let kept = 0;
  for (let at = 0; at <= bytes.length; ) {
    let end = bytes.indexOf(0x0a, at);
    if (end < 0) end = bytes.length;
    const line = bytes.subarray(at, end);
    if (belongsToAny(line, users)) records++;
    else {
      parts.push(line);
      if (line.toString('utf8').trim() !== '') kept++;
    }
    if (end < bytes.length) parts.push(NEWLINE);
    at = end + 1;
  }
  if (records === 0) return { records, removed: false };
  if (kept === 0) {
    rmSync(file, { force: true });
    fsyncDir(dirname(file));
    return { records, removed: true };
  }
  const content = Buffer.concat(parts);
  const rewritten = gz ? gzipSync(content) : content;
  await ledger(sha256(stored), sha256(rewritten), rewritten.length);
  replaceFile(file, rewritten);
  return { records, removed: false };
}

const NEWLINE = Buffer.from('\n');

/** The purge's rule for a raw record: the user's app, and their platformUserId, or no valid one and their orgUserId. */
function belongsToAny(line: Buffer, users: PurgedUser[]): boolean {
  const text = line.toString('utf8');
  // a cheap test first: most lines name none of the users
  if (
    !users.some(
      (u) => text.includes(String(u.platformUserId)) || text.includes(JSON.stringify(u.orgUserId).slice(1, -1)),
    )
  )
    return false;
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return false;
  }
  if (typeof record !== 'object' || record === null) return false;
  const r = record as Record<string, unknown>;
  const id = Number(r['platformUserId']);
  const validId = Number.isSafeInteger(id) && id >= 1;
  return users.some(
    (u) => r['appId'] === u.appId && (validId ? id === u.platformUserId : r['orgUserId'] === u.orgUserId),
  );
}

/** The rows of the users in temp table purge_requests (macro purged_record) taken out by DuckDB, row order kept. */
async function scrubParquet(conn: DuckDBConnection, file: string, ledger: Ledger): Promise<Outcome> {
  const source = `read_parquet(${quoteLiteral(file)})`;
  let counts: Record<string, unknown>[];
  try {
    counts = await query(conn, sqlText('ops/purge/archive_rows'), { file });
  } catch {
    return 'unreadable';
  }
  const records = Number(counts[0]?.['purged'] ?? 0);
  const total = Number(counts[0]?.['total'] ?? 0);
  if (records === 0) return { records, removed: false };
  if (records === total) {
    rmSync(file, { force: true });
    fsyncDir(dirname(file));
    return { records, removed: true };
  }
  const oldKey = await fileKey(file);
  const tmp = join(dirname(file), `.${basename(file)}.purge.tmp`);
  try {
    await run(
      conn,
      `copy (select * from ${source} where not purged_record(appId, platformUserId, orgUserId)) to ${quoteLiteral(tmp)} (format parquet, compression zstd)`,
    );
    syncFile(tmp);
    await ledger(oldKey, await fileKey(tmp), statSync(tmp).size);
    renameSync(tmp, file);
    fsyncDir(dirname(file));
  } finally {
    rmSync(tmp, { force: true });
  }
  return { records, removed: false };
}

function replaceFile(file: string, content: Buffer): void {
  const tmp = join(dirname(file), `.${basename(file)}.purge.tmp`);
  try {
    const fd = openSync(tmp, 'w', 0o600);
    try {
      for (let at = 0; at < content.length; ) at += writeSync(fd, content, at, content.length - at);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
    fsyncDir(dirname(file));
  } finally {
    rmSync(tmp, { force: true });
  }
}

function syncFile(file: string): void {
  const fd = openSync(file, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
