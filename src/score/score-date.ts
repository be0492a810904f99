import type { Warehouse } from '../warehouse/warehouse.js';
import { inTransaction, setWarehouseVersion, warehouseVersion } from '../warehouse/warehouse.js';
import { queryFile, runFile, runScript, sqlText, sqlWith } from '../db/sql.js';
import { dropTemp, insertInto } from '../db/statements.js';

export interface ScoreDateResult {
  appId: string;
  date: string;
  users: number;
  version: number;
  /** Score rows this run wrote (new or changed values) and deleted (no longer given): what the publish copies. */
  rowsWritten: number;
  rowsRemoved: number;
}

/**
 * Computes one app's 30- and 90-day safety scores as of `date` with sql/models/marts/safety_scores.sql
 * and replaces that date's scores in one transaction (so re-running a date recomputes it), writing
 * only the rows whose values changed (sql/ops/score/replace_scores.sql); a date not scored before gets
 * its rows inserted as they come (sql/ops/score/insert_new_date.sql).
 */
export async function scoreDate(
  wh: Warehouse,
  appId: string,
  date: string,
  evaluatedAt: Date,
): Promise<ScoreDateResult> {
  const conn = wh.conn;
  const version = (await warehouseVersion(conn)) + 1;
  const params = { app_id: appId, as_of: date, evaluated_at: evaluatedAt.toISOString(), version };
  const scores = sqlWith('ops/score/scores_of_app', { safety_scores: sqlText('models/marts/safety_scores') });
  const [prior] = await queryFile(conn, 'ops/score/date_scored', params);
  if (prior?.['scored'] === true) {
    // the run's rows as safety_scores holds them (its column order and types, the run's version):
    // replace_scores compares and inserts them as they are, with no second copy
    await runFile(conn, 'ops/score/scored_today');
    await insertInto(conn, 'scored_today', scores, params, { byName: true });
    await inTransaction(conn, async () => {
      await runScript(conn, 'ops/score/replace_scores', params);
      await setWarehouseVersion(conn, version);
    });
    await dropTemp(conn, 'scored_today');
  } else {
    await inTransaction(conn, async () => {
      await insertInto(conn, 'safety_scores', scores, params, { byName: true });
      await runScript(conn, 'ops/score/insert_new_date', params);
      await setWarehouseVersion(conn, version);
    });
  }
  const [row = {}] = await queryFile(conn, 'ops/score/run_counts', params);
  return {
    appId,
    date,
    users: Number(row['users'] ?? 0),
    version,
    rowsWritten: Number(row['written'] ?? 0),
    rowsRemoved: Number(row['removed'] ?? 0),
  };
}
