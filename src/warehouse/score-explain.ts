import type { DuckDBConnection } from '@duckdb/node-api';
import { queryFile, runScript } from '../db/sql.js';
import { inTransaction, setWarehouseVersion, warehouseVersion } from './version.js';

/**
 * Gives scores stored before contributions, multipliers and percentiles were kept those values
 * (sql/ops/warehouse/score_explain_*.sql), under a new warehouse version so the next publish serves
 * them. Nothing is written when every score has them.
 */
export async function backfillScoreExplanations(conn: DuckDBConnection): Promise<number> {
  await runScript(conn, 'ops/warehouse/score_explain_columns');
  const [row] = await queryFile(conn, 'ops/warehouse/score_explain_missing');
  const missing = Number(row?.['n'] ?? 0);
  if (missing === 0) return 0;
  await inTransaction(conn, async () => {
    const version = (await warehouseVersion(conn)) + 1;
    await runScript(conn, 'ops/warehouse/score_explain_backfill', { version });
    await setWarehouseVersion(conn, version);
  });
  return missing;
}
