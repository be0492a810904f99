import type { DuckDBConnection } from '@duckdb/node-api';
import { renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fsyncDir } from '../fsutil.js';
import { attach, checkpoint, copyDatabase, detach } from './statements.js';

export interface Compaction {
  file: string;
  bytesBefore: number;
  bytesAfter: number;
  seconds: number;
}

/**
 * Rewrites a DuckDB database into a fresh file and renames it into place (docs/decisions.md, Deletion, erasure
 * reaches the bytes). DuckDB deletes a row by marking it: its bytes stay in the file's blocks
 * (and a freed block is reused, not wiped) until the table is written anew, so after a purge the
 * deleted user's tripIds and deviceIds could still be read from the file. COPY FROM DATABASE
 * writes only the live rows into a new file; it is fsynced and renamed over the old one, so the
 * name holds either the old database or the whole new one.
 *
 * `source` is the database as `conn` knows it (attached, or the connection's own); the caller
 * holds the file's write lock throughout (the warehouse: its job; a slot: attached for writing), so
 * nothing writes the old file after the copy. A reader that had the old file open keeps reading
 * its bytes until it closes it; the name then holds only the new file.
 */
export async function compactDatabase(conn: DuckDBConnection, source: string, file: string): Promise<Compaction> {
  const started = performance.now();
  const bytesBefore = statSync(file).size;
  const tmp = join(dirname(file), `.${basename(file)}.compact.tmp`);
  const alias = 'compact_target';
  rmSync(tmp, { force: true });
  rmSync(`${tmp}.wal`, { force: true });
  try {
    await checkpoint(conn, source);
    await attach(conn, tmp, alias);
    try {
      await copyDatabase(conn, source, alias);
    } finally {
      await detach(conn, alias);
    }
    // fsyncDir fsyncs any path through a read-only descriptor: the new file's bytes, then the rename
    fsyncDir(tmp);
    renameSync(tmp, file);
    // the old file's log, if any, was checkpointed above: none may be replayed into the new one
    rmSync(`${file}.wal`, { force: true });
    fsyncDir(dirname(file));
  } finally {
    rmSync(tmp, { force: true });
    rmSync(`${tmp}.wal`, { force: true });
  }
  return { file, bytesBefore, bytesAfter: statSync(file).size, seconds: (performance.now() - started) / 1000 };
}
