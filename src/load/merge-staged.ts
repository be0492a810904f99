import type { DuckDBConnection } from '@duckdb/node-api';
import { type Params, query, runScript, sqlText } from '../db/sql.js';
import type { FileReport } from './report.js';
import { judgeOverlaps } from './overlaps.js';
import { CheckFailedError, runChecks } from '../warehouse/checks.js';
import { insertInto } from '../db/statements.js';

/** The warehouse tables a file's merge writes, whose checks (sql/checks) judge the file's change. */
const MERGED_TABLES = new Set(['trips', 'trip_events', 'stats_daily']);

/**
 * Inside a file's transaction: merges the staged file into the warehouse (sql/ops/load/merge_file.sql),
 * judges the overlap rule again where the file changed the account's trips (overlaps.ts),
 * recomputes the statistics of every user-day it touched, and adds what it counted to `report`.
 * Last, the checks that guard a publish judge what this file changed (its version's rows: new and
 * replaced trips, re-judged neighbours, events, statistics): a failing check throws
 * CheckFailedError, so the caller's transaction rolls the file back and it fails alone instead of
 * stopping every later publish. Shared by the load and the re-derivation, which differ only in
 * their ledger rows.
 */
export async function mergeStaged(
  conn: DuckDBConnection,
  params: Params & { version: number },
  report: FileReport,
): Promise<void> {
  await runScript(conn, 'ops/load/merge_file', params);
  // before the statistics: a trip the rule changes moves its user-day's sums too
  await judgeOverlaps(conn, params.version);
  await insertInto(
    conn,
    'stats_daily',
    sqlText('models/marts/stats_daily'),
    { version: params.version },
    { byName: true },
  );
  for (const row of await query(conn, sqlText('ops/load/file_report'))) {
    const section = row['section'] as 'records' | 'points' | 'events' | 'status' | 'replaced';
    const n = Number(row['n']);
    if (section === 'replaced') report.replaced = n;
    else report[section][String(row['reason'])] = n;
  }
  const failures = await runChecks(conn, params.version - 1, MERGED_TABLES);
  if (failures.length > 0) throw new CheckFailedError(failures);
}
