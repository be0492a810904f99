import type { DuckDBConnection } from '@duckdb/node-api';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { basename } from 'node:path';
import { isMissingTable, runScript, sqlText } from '../db/sql.js';
import { attach, detach, inDatabase } from '../db/statements.js';
import { metaValue, readMeta, setMeta } from '../warehouse/meta.js';
import { describeHolder, WAIT_REPORT_EVERY_MS } from '../db/open.js';
import { slotFile, type Slot } from './manifest.js';

export const other = (slot: Slot): Slot => (slot === 'a' ? 'b' : 'a');

/**
 * With no manifest (a first publish, or one removed under a running API) either slot may be the
 * one an API serves: a reader's lock names it. The first slot no reader holds is written (a
 * corrupt one counts as free: the publish rebuilds it); with both held, slot a is waited for.
 */
export async function slotNoReaderHolds(conn: DuckDBConnection, publishedDir: string): Promise<Slot> {
  for (const slot of ['a', 'b'] as const) {
    try {
      await attach(conn, slotFile(publishedDir, slot), 'slot');
      await detach(conn, 'slot');
      return slot;
    } catch (error) {
      if (!/Could not set lock|Conflicting lock/i.test(error instanceof Error ? error.message : String(error)))
        return slot;
    }
  }
  return 'a';
}

/** The API may still be draining the standby slot after the last switch: wait for it to let go. */
export async function attachWithRetry(
  conn: DuckDBConnection,
  file: string,
  waitMs: number,
  onWait?: (message: string) => void,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  let reportedAt = -Infinity;
  for (;;) {
    try {
      await attach(conn, file, 'slot');
      return;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (!/Could not set lock|Conflicting lock/i.test(message) || Date.now() > deadline) {
        throw new Error(`cannot open standby slot ${file} for writing: ${message.split('\n')[0]}`);
      }
      // an API lets go of the previous slot when its last request on it ends: say whom we wait for
      if (onWait && Date.now() - reportedAt >= WAIT_REPORT_EVERY_MS) {
        reportedAt = Date.now();
        onWait(
          `waiting for ${describeHolder(message)} holding the standby slot ${basename(file)} (gives up in ${Math.ceil((deadline - Date.now()) / 1000)} s; DRIVING_PUBLISH_LOCK_WAIT_MS)`,
        );
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** DuckDB's words for a file that is not a database, or a block whose checksum does not match (not a lock). */
export function isCorruptSlot(error: unknown): boolean {
  return /not a valid DuckDB database file|Corrupt database file|does not match stored checksum/i.test(
    error instanceof Error ? error.message : String(error),
  );
}

/** Deletes a corrupt slot and its write-ahead log. */
export function removeCorrupt(file: string): void {
  rmSync(file, { force: true });
  rmSync(`${file}.wal`, { force: true });
}

/** A slot that belongs to another warehouse, or claims a future version, is rebuilt from zero. */
export async function prepareSlot(conn: DuckDBConnection, whId: string, version: number): Promise<number> {
  return inDatabase(conn, 'slot', async () => {
    await ensureSlotSchema(conn);
    const meta = await readMeta(conn);
    const slotVersion = Number(meta.get('version') ?? 0);
    if (meta.get('warehouse_id') === whId && slotVersion <= version) return slotVersion;
    await runScript(conn, 'ops/publish/slot_clear');
    await setMeta(conn, 'version', '0');
    await setMeta(conn, 'warehouse_id', whId);
    return 0;
  });
}

/**
 * Gives the slot in use the tables of sql/ops/publish/slot_schema.sql: a slot whose meta records that
 * file's digest has them, and skips its 22 statements (a cost paid at every publish); a new slot,
 * or one of an earlier schema, runs them once and records the digest. The digest vouches for what
 * this release's script made: a slot changed by other means keeps what they did (a release
 * before digests, run on it again, would have added back indexes this script drops).
 */
async function ensureSlotSchema(conn: DuckDBConnection): Promise<void> {
  const digest = createHash('sha256').update(sqlText('ops/publish/slot_schema')).digest('hex');
  // a new slot has no meta table yet: the query fails (outside any transaction) and the script
  // runs; any other failure is the slot's, said as it is
  const recorded = await metaValue(conn, 'schema_digest').catch((error: unknown) => {
    if (isMissingTable(error, 'meta')) return undefined;
    throw error;
  });
  if (recorded === digest) return;
  await runScript(conn, 'ops/publish/slot_schema');
  await setMeta(conn, 'schema_digest', digest);
}
