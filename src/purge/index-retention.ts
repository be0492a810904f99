import type { DuckDBConnection } from '@duckdb/node-api';
import { jobSettings } from '../job-settings.js';
import { runScript } from '../db/sql.js';
import { addDays, todayIn } from '../time.js';

/** The cut each open warehouse's index was last pruned to: it moves once a day. */
const prunedTo = new WeakMap<DuckDBConnection, string>();

/**
 * The purge's index (src/purge/index.ts) forgets the files retention removes, at the same cut as
 * the load's pruning (UTC today minus DRIVING_POINTS_RETENTION_DAYS), once a day per open
 * warehouse, so it follows the days kept, not every file ever loaded.
 */
export async function pruneIndex(conn: DuckDBConnection, now: Date): Promise<void> {
  const oldest = addDays(todayIn('UTC', now), -jobSettings().pointsRetentionDays);
  if (prunedTo.get(conn) === oldest) return;
  await runScript(conn, 'ops/purge/index_retention', { oldest });
  prunedTo.set(conn, oldest);
}
