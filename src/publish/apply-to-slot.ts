import type { DuckDBConnection } from '@duckdb/node-api';
import { inTransaction } from '../warehouse/warehouse.js';
import { queryFile, queryScript, runScript } from '../db/sql.js';
import { checkpoint, inDatabase } from '../db/statements.js';
import { setMeta } from '../warehouse/meta.js';
import { CheckFailedError, runChecks } from '../warehouse/checks.js';

/**
 * Brings the slot attached as `slot` from version `since` to `version` in one transaction, with
 * the checks on what changed inside it (a failing check rolls it back), then checkpoints it: the
 * API opens slots read-only and must find every row in the file. Runs only the parts of
 * sql/ops/publish/apply/ that have rows to move (a score run moves scores only), removals before
 * insertions. Returns the rows copied or removed.
 */
export async function applyToSlot(conn: DuckDBConnection, since: number, version: number): Promise<number> {
  const rows = await inTransaction(conn, async () => {
    const [scope = {}] = await queryScript(conn, 'ops/publish/apply/scope', { since });
    const changed = {
      trips: Number(scope['trips'] ?? 0) > 0,
      days: Number(scope['days'] ?? 0) > 0,
      scores: Number(scope['scores'] ?? 0) > 0,
      purged: Number(scope['purged'] ?? 0) > 0,
    };
    for (const part of ['trips', 'days', 'scores', 'purged'] as const)
      if (changed[part]) await runScript(conn, `ops/publish/apply/remove_${part}`);
    for (const part of ['trips', 'days', 'scores'] as const)
      if (changed[part]) await runScript(conn, `ops/publish/apply/insert_${part}`, { since });
    await inDatabase(conn, 'slot', async () => {
      await setMeta(conn, 'version', version);
      // a check looks at rows written since `since` of the tables it names: none, nothing to find
      const tables = new Set([
        ...(changed.trips ? ['trips', 'trip_events'] : []),
        ...(changed.days ? ['stats_daily'] : []),
        ...(changed.scores ? ['safety_scores'] : []),
      ]);
      const failures = await runChecks(conn, since, tables);
      if (failures.length > 0) throw new CheckFailedError(failures);
    });
    return Number(scope['trips'] ?? 0) + Number(scope['days'] ?? 0) + Number(scope['scores'] ?? 0);
  });
  await checkpoint(conn, 'slot');
  return rows;
}

/** Whether users were purged after warehouse version `since`. */
export async function purgedAfter(conn: DuckDBConnection, since: number): Promise<boolean> {
  const [row] = await queryFile(conn, 'ops/publish/purged_after', { since });
  return row?.['any'] === true;
}
