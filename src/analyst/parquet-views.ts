import type { DuckDBConnection } from '@duckdb/node-api';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { quoteIdent, quoteLiteral, run } from '../db/sql.js';
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
    const source =
      partition === null
        ? `read_parquet(${quoteLiteral(join(dir, `${table}.parquet`))})`
        : `read_parquet(${quoteLiteral(join(dir, table, '**', '*.parquet'))}, hive_partitioning = true, union_by_name = true)`;
    const exclude = partition === null ? '' : ` exclude (${quoteIdent(partition)})`;
    await run(conn, `create or replace view ${quoteIdent(table)} as select *${exclude} from ${source}`);
  }
  await run(conn, 'create or replace view scope_user_days as select distinct app_id, user_id, trip_date from trips');
}
