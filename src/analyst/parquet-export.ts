import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { InputError } from '../errors.js';
import { dirname, join, basename } from 'node:path';
import type { Warehouse } from '../warehouse/warehouse.js';
import { query, quoteIdent, runFile, sqlWith } from '../db/sql.js';
import { copyTo } from '../db/statements.js';
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
  await runFile(wh.conn, 'ops/analyst/export_deleted');
  for (const u of deleted)
    await runFile(wh.conn, 'ops/analyst/export_deleted_add', { app: u.appId, user: u.platformUserId });
  for (const { table, partition, by } of EXPORTS) {
    const name = quoteIdent(table);
    const rows = partition === null ? null : sqlWith('ops/analyst/export_rows', { table: name });
    const [count] = await query(wh.conn, sqlWith('ops/analyst/export_count', { rows: rows ? `(${rows})` : name }));
    tables[table] = Number(count?.['n'] ?? 0);
    if (partition === null || by === null || rows === null) {
      const file = appsFile(staging, cell);
      mkdirSync(dirname(file), { recursive: true });
      await copyTo(wh.conn, { table }, file, 'format parquet');
      continue;
    }
    const target = tableFolder(staging, table, cell);
    mkdirSync(target, { recursive: true });
    // Ordered by user and time, so a reader filtering on a user prunes row groups by their min/max.
    const partitioned = sqlWith('ops/analyst/export_partitioned', { rows, by, partition: quoteIdent(partition) });
    await copyTo(
      wh.conn,
      { query: partitioned },
      target,
      `format parquet, compression zstd, partition_by (app_id, ${quoteIdent(partition)}), overwrite_or_ignore true`,
    );
    if (tables[table] === 0) {
      // keep the schema readable for analysts even when there is nothing to export yet
      const empty = join(target, 'app_id=_', `${partition}=_`);
      mkdirSync(empty, { recursive: true });
      const none = sqlWith('ops/analyst/export_empty', { table: name });
      await copyTo(wh.conn, { query: none }, join(empty, 'empty.parquet'), 'format parquet');
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
