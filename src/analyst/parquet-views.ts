import type { DuckDBConnection } from '@duckdb/node-api';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { quoteIdent, quoteLiteral, run, runFile, sqlWith } from '../db/sql.js';
import { installMacros } from '../db/macros.js';
import { EXPORTS } from './parquet-export.js';
import { InputError } from '../errors.js';

/**
 * Makes an export folder look like the warehouse: one view per exported table over its Parquet
 * files (partition columns dropped again), the model macros, and `scope_user_days` covering every
 * user-day, so the files in sql/ run unchanged.
 */
export async function attachParquetExport(conn: DuckDBConnection, dir: string): Promise<void> {
  if (!existsSync(join(dir, 'apps.parquet')))
    throw new InputError(`--parquet ${dir}: not an export folder (no apps.parquet)`);
  await installMacros(conn);
  for (const { table, partition } of EXPORTS) {
    const view = quoteIdent(table);
    await run(
      conn,
      partition === null
        ? sqlWith('ops/analyst/view_file', { view, file: quoteLiteral(join(dir, `${table}.parquet`)) })
        : sqlWith('ops/analyst/view_partitioned', {
            view,
            files: quoteLiteral(join(dir, table, '**', '*.parquet')),
            partition: quoteIdent(partition),
          }),
    );
  }
  await runFile(conn, 'ops/analyst/view_scope_user_days');
}
