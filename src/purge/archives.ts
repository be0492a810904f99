import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { fsyncDir, fsyncFile } from '../fsutil.js';
import { fileKey } from '../load/scan-file.js';
import { query, quoteLiteral, run, sqlText, sqlWith } from '../db/sql.js';
import { scrubNdjson, type Ledger, type ScrubOutcome } from './ndjson-scrub.js';
import { scrubMerged } from './merged-scrub.js';
import { MERGED } from '../load/archive-members.js';
import { copyTo } from '../db/statements.js';

/** Whose records to take out: the purge's requests (app, platform user id, org user id). */
export interface PurgedUser {
  appId: string;
  platformUserId: number;
  orgUserId: string;
  /** Erased because the driver moved to another cell (src/cells/move-leave.ts), not deleted. */
  moved?: boolean;
}

export interface ArchiveScrubResult {
  /** Archives opened (the index's choice, src/purge/index.ts) and the bytes read of them, as stored. */
  filesOpened: number;
  bytesRead: number;
  filesRewritten: number;
  filesRemoved: number;
  records: number;
  /** Archives that could not be read (a truncated gzip, a damaged or failed Parquet file without the identity columns): removed. */
  unreadable: string[];
}

const NDJSON = /\.(ndjson|jsonl|json)(\.gz)?$/i;

/**
 * Takes the records of purged users out of the archived landing files `files` (of
 * `landing/loaded/<day>/` and `landing/failed/<day>/`, those src/purge/index.ts chose): each file
 * that holds one is rewritten without them in the same format, streaming (src/purge/ndjson-scrub.ts;
 * Parquet through DuckDB's COPY), or removed when nothing else remains. An NDJSON line keeps its
 * bytes and its line number (a removed record leaves an empty line, which the loader skips), so
 * quarantine references and a re-derive of the archive stay right. A rewritten archive that was
 * loaded is entered in the ledger under its new SHA-256 with the original's batch, so loading it
 * again is a no-op, like loading the original. An archive that cannot be read to its end (a
 * truncated gzip, a damaged Parquet file) cannot be filtered and is removed.
 */
export async function scrubArchives(
  conn: DuckDBConnection,
  files: string[],
  users: PurgedUser[],
  now: Date,
): Promise<ArchiveScrubResult> {
  const result: ArchiveScrubResult = {
    filesOpened: 0,
    bytesRead: 0,
    filesRewritten: 0,
    filesRemoved: 0,
    records: 0,
    unreadable: [],
  };
  if (users.length === 0) return result;
  const belongs = belongsToAny(users);
  for (const file of files) {
    if (!existsSync(file)) continue;
    // the ledger learns the new key before the rename: a crash in between leaves both keys known
    const ledger = (oldKey: string, newKey: string, bytes: number) =>
      run(conn, sqlText('ops/purge/ledger_rewritten'), {
        old_key: oldKey,
        new_key: newKey,
        path: file,
        bytes,
        now: now.toISOString(),
      });
    result.filesOpened++;
    // a merged day file (src/load/archive-members.ts) is rewritten a member at a time
    const outcome = MERGED.test(basename(file))
      ? await scrubMerged(conn, file, belongs, now)
      : NDJSON.test(file)
        ? await scrubNdjson(file, belongs, ledger)
        : await scrubParquet(conn, file, ledger);
    result.bytesRead += outcome.bytesRead;
    if ('unreadable' in outcome) {
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

/**
 * The purge's rule for a raw record: the user's app, and their platformUserId, or no valid one and
 * their orgUserId. A cheap test on the bytes first (most lines name none of the users): the ids as
 * they are written in JSON text.
 */
function belongsToAny(users: PurgedUser[]): (line: Buffer) => boolean {
  const needles = users.flatMap((u) => [
    Buffer.from(String(u.platformUserId)),
    Buffer.from(JSON.stringify(u.orgUserId).slice(1, -1)),
  ]);
  return (line) => {
    if (!needles.some((needle) => line.includes(needle))) return false;
    let record: unknown;
    try {
      record = JSON.parse(line.toString('utf8'));
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
  };
}

/** The rows of the users in temp table purge_requests (macro purged_record) taken out by DuckDB, row order kept. */
async function scrubParquet(conn: DuckDBConnection, file: string, ledger: Ledger): Promise<ScrubOutcome> {
  const bytesRead = statSync(file).size;
  let counts: Record<string, unknown>[];
  try {
    counts = await query(conn, sqlText('ops/purge/archive_rows'), { file });
  } catch {
    return { unreadable: true, bytesRead };
  }
  const records = Number(counts[0]?.['purged'] ?? 0);
  const total = Number(counts[0]?.['total'] ?? 0);
  if (records === 0) return { records, removed: false, bytesRead };
  if (records === total) {
    rmSync(file, { force: true });
    fsyncDir(dirname(file));
    return { records, removed: true, bytesRead };
  }
  const oldKey = await fileKey(file);
  const tmp = join(dirname(file), `.${basename(file)}.purge.tmp`);
  try {
    const kept = sqlWith('ops/purge/archive_kept', { file: quoteLiteral(file) });
    await copyTo(conn, { query: kept }, tmp, 'format parquet, compression zstd');
    fsyncFile(tmp);
    await ledger(oldKey, await fileKey(tmp), statSync(tmp).size);
    renameSync(tmp, file);
    fsyncDir(dirname(file));
  } finally {
    rmSync(tmp, { force: true });
  }
  return { records, removed: false, bytesRead };
}
