import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { InputError } from '../errors.js';
import { dirname, join, basename } from 'node:path';
import type { Warehouse } from '../warehouse/warehouse.js';
import { quoteIdent, quoteLiteral, query, run } from '../db/sql.js';
import { appsFile, tableFolder } from './export-layout.js';

/** Each exported table, and the column it is partitioned by besides app_id. */
export const EXPORTS = [
  { table: 'apps', partition: null, by: null },
  { table: 'trips', partition: 'trip_month', by: "strftime(trip_date, '%Y-%m')" },
  { table: 'trip_events', partition: 'event_month', by: "strftime(timezone('UTC', started_at), '%Y-%m')" },
  { table: 'stats_daily', partition: 'stat_month', by: "strftime(stat_date, '%Y-%m')" },
  { table: 'safety_scores', partition: 'evaluation_month', by: "strftime(evaluation_date, '%Y-%m')" },
] as const;

/** Marks a folder as an export, the only kind of folder a new export may replace. */
const MARKER = '.driving-export';

/** Whether `dir` holds an export this job wrote (the purge writes such a folder again). */
export const isExport = (dir: string): boolean => existsSync(join(dir, MARKER));

/** An account whose DELETE was recorded (src/purge/requests.ts). */
export interface DeletedUser {
  appId: string;
  platformUserId: number;
}

export interface ExportResult {
  out: string;
  /** The cell whose export this is (its files under `<table>/cell=NAME/`), or null: a whole warehouse's. */
  cell: string | null;
  tables: Record<string, number>;
}

/**
 * Writes Hive-partitioned Parquet (app_id=…/<month>=…/, a cell's one level down under cell=NAME/,
 * src/analyst/export-layout.ts) of the warehouse's served tables into a fresh folder beside `out`,
 * then swaps it in, so a reader never sees half an export.
 */
export async function exportParquet(
  wh: Warehouse,
  out: string,
  deleted: readonly DeletedUser[] = [],
  cell: string | null = null,
): Promise<ExportResult> {
  if (existsSync(out) && readdirSync(out).length > 0 && !existsSync(join(out, MARKER))) {
    throw new InputError(`--out ${out}: exists and is not an earlier export; refusing to replace it`);
  }
  const staging = join(dirname(out), `.${basename(out)}.tmp-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const tables: Record<string, number> = {};
  // accounts deleted but not yet purged are never exported (docs/decisions.md, Deletion): their rows are left out
  await run(wh.conn, 'create or replace temp table export_deleted (app_id varchar, user_id bigint)');
  for (const u of deleted)
    await run(wh.conn, 'insert into export_deleted values ($app, $user)', { app: u.appId, user: u.platformUserId });
  for (const { table, partition, by } of EXPORTS) {
    const source =
      partition === null
        ? quoteIdent(table)
        : `(select * from ${quoteIdent(table)} as t where not exists (select 1 from export_deleted as d where d.app_id = t.app_id and d.user_id = t.user_id))`;
    const rows = await query(wh.conn, `select count(*) as n from ${source}`);
    tables[table] = Number(rows[0]?.['n'] ?? 0);
    if (partition === null || by === null) {
      const file = appsFile(staging, cell);
      mkdirSync(dirname(file), { recursive: true });
      await run(wh.conn, `copy ${quoteIdent(table)} to ${quoteLiteral(file)} (format parquet)`);
      continue;
    }
    const target = tableFolder(staging, table, cell);
    mkdirSync(target, { recursive: true });
    // Ordered by user and time, so a reader filtering on a user prunes row groups by their min/max.
    await run(
      wh.conn,
      `copy (select *, ${by} as ${quoteIdent(partition)} from ${source} order by app_id, user_id) ` +
        `to ${quoteLiteral(target)} (format parquet, compression zstd, partition_by (app_id, ${quoteIdent(partition)}), overwrite_or_ignore true)`,
    );
    if (tables[table] === 0) {
      // keep the schema readable for analysts even when there is nothing to export yet
      const empty = join(target, 'app_id=_', `${partition}=_`);
      mkdirSync(empty, { recursive: true });
      await run(
        wh.conn,
        `copy (select * exclude (app_id) from ${quoteIdent(table)} limit 0) to ${quoteLiteral(join(empty, 'empty.parquet'))} (format parquet)`,
      );
    }
  }
  const whose = cell === null ? '' : ` (cell ${cell})`;
  writeFileSync(join(staging, MARKER), `written by jobs/export.js${whose} at ${new Date().toISOString()}\n`);
  const previous = `${staging}.old`;
  if (existsSync(out)) renameSync(out, previous);
  renameSync(staging, out);
  rmSync(previous, { recursive: true, force: true });
  return { out, cell, tables };
}
