import type { DuckDBConnection } from '@duckdb/node-api';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { queryFile, runScript } from '../db/sql.js';
import { attach, checkpoint, detach } from '../db/statements.js';
import { inTransaction } from '../warehouse/warehouse.js';
import { EXTRAS_SUFFIX } from '../serving/format.js';
import { slotFile, type Manifest } from './manifest.js';
import { compactDatabase } from '../db/compact.js';

export interface RetiredScrub {
  /** Users purged since the retired manifest's version (0: nothing was done). */
  users: number;
  /** Whether the retired slot was cleaned (false: the API still held it; the next publish cleans it). */
  slot: boolean;
  /** Serving files no manifest names any more, removed. */
  packFilesRemoved: number;
}

/**
 * After a publish that carried purges: once the API lets go of the snapshot it served until the
 * switch (`retired`), that slot loses the purged users' rows too, and the serving files only it
 * named are removed, so no slot or serving file on disk still holds them. The API's release is
 * seen through DuckDB's lock on the slot (it closes the slot and its pack together); when it does
 * not come within `lockWaitMs`, both are left to the next publish, which writes that slot and
 * removes those files anyway.
 */
export async function scrubRetired(
  conn: DuckDBConnection,
  publishedDir: string,
  retired: Manifest | null,
  next: Manifest,
  lockWaitMs: number,
): Promise<RetiredScrub> {
  if (!retired || retired.warehouseId !== next.warehouseId || retired.slot === next.slot)
    return { users: 0, slot: false, packFilesRemoved: 0 };
  const [row] = await queryFile(conn, 'ops/purge/purged_since_count', { since: retired.version });
  const users = Number(row?.['n'] ?? 0);
  if (users === 0) return { users, slot: false, packFilesRemoved: 0 };
  if (!(await attachWhenReleased(conn, slotFile(publishedDir, retired.slot), lockWaitMs)))
    return { users, slot: false, packFilesRemoved: 0 };
  try {
    await inTransaction(conn, () => runScript(conn, 'ops/purge/scrub_retired_slot', { since: retired.version }));
    await checkpoint(conn, 'retired');
    // deleted rows keep their bytes until the file is written anew (src/db/compact.ts)
    await compactDatabase(conn, 'retired', slotFile(publishedDir, retired.slot));
  } finally {
    await detach(conn, 'retired');
  }
  return { users, slot: true, packFilesRemoved: removeUnnamedPackFiles(publishedDir, next) };
}

/** Attaches the slot for writing (as `alias`) once no reader holds it; false when that did not happen in time. */
export async function attachWhenReleased(
  conn: DuckDBConnection,
  file: string,
  waitMs: number,
  alias = 'retired',
): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      await attach(conn, file, alias);
      return true;
    } catch (error) {
      // DuckDB's words for a lock held by another process (a bare /lock/ would match a damaged "block")
      if (!/Could not set lock|Conflicting lock/i.test(error instanceof Error ? error.message : String(error)))
        throw error;
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Removes the serving files the manifest does not name (once no reader serves an earlier one); how many. */
export function removeUnnamedPackFiles(publishedDir: string, manifest: Manifest): number {
  const names = Object.values(manifest.pack?.files ?? {}).flat();
  const kept = new Set(names.flatMap((n) => [n, `${n}${EXTRAS_SUFFIX}`]));
  let removed = 0;
  for (const name of readdirSync(publishedDir)) {
    if (name.startsWith('serving-') && !kept.has(name)) {
      rmSync(join(publishedDir, name), { force: true });
      removed++;
    }
  }
  return removed;
}
