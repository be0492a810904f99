import type { DuckDBConnection } from '@duckdb/node-api';
import { join } from 'node:path';
import { quoteIdent, quoteLiteral, run, runFile, sqlWith } from '../db/sql.js';
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
  for (const { table, partition } of EXPORTS) await run(conn, viewOf(sources, table, partition));
  await runFile(conn, 'ops/analyst/view_scope_user_days');
}

/** The statement that makes `table`'s view over the export(s) (sql/ops/analyst/view_*.sql). */
function viewOf(sources: ExportSources, table: string, partition: string | null): string {
  const view = quoteIdent(table);
  if (sources.kind === 'whole') {
    if (partition === null)
      return sqlWith('ops/analyst/view_file', { view, file: quoteLiteral(appsFile(sources.root, null)) });
    return sqlWith('ops/analyst/view_partitioned', {
      view,
      files: quoteLiteral(join(sources.root, table, '**', '*.parquet')),
      partition: quoteIdent(partition),
    });
  }
  const list = (globs: string[]) => `[${globs.map(quoteLiteral).join(', ')}]`;
  const cells = { cell_column: quoteIdent(CELL_KEY), cell_key: quoteLiteral(CELL_KEY) };
  if (partition === null)
    return sqlWith('ops/analyst/view_cells_apps', {
      view,
      files: list(sources.roots.map((r) => join(r, table, `${CELL_KEY}=*`, 'apps.parquet'))),
      ...cells,
    });
  return sqlWith('ops/analyst/view_cells_partitioned', {
    view,
    files: list(sources.roots.map((r) => join(r, table, `${CELL_KEY}=*`, '**', '*.parquet'))),
    ...cells,
    partition: quoteIdent(partition),
  });
}
