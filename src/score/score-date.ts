import type { Warehouse } from '../warehouse/warehouse.js';
import { inTransaction, setWarehouseVersion, warehouseVersion } from '../warehouse/warehouse.js';
import { queryFile, run, runScript, sqlText } from '../db/sql.js';

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
  const scores = `select *, $version as version from (${sqlText('models/marts/safety_scores')}) where app_id = $app_id`;
  const [prior] = await queryFile(conn, 'ops/score/date_scored', params);
  if (prior?.['scored'] === true) {
    // the run's rows as safety_scores holds them (its column order and types, the run's version):
    // replace_scores compares and inserts them as they are, with no second copy
    await run(conn, 'create or replace temp table scored_today as select * from safety_scores limit 0');
    await run(conn, `insert into scored_today by name ${scores}`, params);
    await inTransaction(conn, async () => {
      await runScript(conn, 'ops/score/replace_scores', params);
      await setWarehouseVersion(conn, version);
    });
    await run(conn, 'drop table scored_today');
  } else {
    await inTransaction(conn, async () => {
      await run(conn, `insert into safety_scores by name ${scores}`, params);
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
