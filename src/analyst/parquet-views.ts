import type { DuckDBConnection } from '@duckdb/node-api';
import { join } from 'node:path';
import { quoteIdent, quoteLiteral, run } from '../db/sql.js';
import { installMacros } from '../db/macros.js';
import { EXPORTS } from './parquet-export.js';
import { appsFile, CELL_KEY } from './export-layout.js';
import { exportSources, type ExportSources } from './export-sources.js';

/**
 * Makes an export folder (or the exports of several cells, read as one) look like the warehouse:
 * one view per exported table over its Parquet files (partition columns, the cell included,
 * dropped again), the model macros, and `scope_user_days` covering every user-day, so the files in
 * sql/ run unchanged and give what one warehouse holding every cell's drivers gives.
 */
export async function attachParquetExport(conn: DuckDBConnection, dirs: string | readonly string[]): Promise<void> {
  const sources = exportSources(typeof dirs === 'string' ? [dirs] : dirs);
  await installMacros(conn);
  for (const { table, partition } of EXPORTS)
    await run(conn, `create or replace view ${quoteIdent(table)} as ${viewOf(sources, table, partition)}`);
  await run(conn, 'create or replace view scope_user_days as select distinct app_id, user_id, trip_date from trips');
}

function viewOf(sources: ExportSources, table: string, partition: string | null): string {
  if (sources.kind === 'whole') {
    if (partition === null) return `select * from read_parquet(${quoteLiteral(appsFile(sources.root, null))})`;
    const files = quoteLiteral(join(sources.root, table, '**', '*.parquet'));
    return `select * exclude (${quoteIdent(partition)}) from read_parquet(${files}, hive_partitioning = true, union_by_name = true)`;
  }
  // a cell's name is text whatever it looks like (a cell named 1 is not a number)
  const read = (globs: string[]) =>
    `read_parquet([${globs.map(quoteLiteral).join(', ')}], hive_partitioning = true, union_by_name = true, hive_types = {${quoteLiteral(CELL_KEY)}: varchar})`;
  if (partition === null) {
    // every cell's export holds the apps of the shared store: one row per app, whichever cell's
    const globs = sources.roots.map((r) => join(r, table, `${CELL_KEY}=*`, 'apps.parquet'));
    return `select distinct on (app_id) * exclude (${quoteIdent(CELL_KEY)}) from ${read(globs)} order by app_id`;
  }
  const globs = sources.roots.map((r) => join(r, table, `${CELL_KEY}=*`, '**', '*.parquet'));
  return `select * exclude (${quoteIdent(CELL_KEY)}, ${quoteIdent(partition)}) from ${read(globs)}`;
}
